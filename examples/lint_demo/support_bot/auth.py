"""Who is asking: the customer behind the bearer token (a FastAPI dependency)."""

from dataclasses import dataclass

from fastapi import Header, HTTPException


@dataclass(frozen=True)
class Customer:
    id: str
    name: str
    plan: str


# API tokens of the demo customers (an identity provider in production).
_CUSTOMERS = {"demo-token": Customer("c-1001", "Dana Reyes", "team")}


def current_customer(authorization: str = Header(default="")) -> Customer:
    """The customer whose token is in the ``Authorization: Bearer ...`` header; 401 otherwise."""
    customer = _CUSTOMERS.get(authorization.removeprefix("Bearer ").strip())
    if customer is None:
        raise HTTPException(status_code=401, detail="unknown or missing bearer token")
    return customer
