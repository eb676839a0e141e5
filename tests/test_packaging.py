"""pyproject.toml is accepted by the build backend without a deprecation warning: ``project.license`` is an SPDX
expression (PEP 639), and the build-system floor is a setuptools release that understands it."""

from __future__ import annotations

import tomllib
import warnings
from importlib.metadata import version
from pathlib import Path

from packaging.licenses import canonicalize_license_expression
from packaging.requirements import Requirement
from packaging.version import Version
from setuptools.config.pyprojecttoml import apply_configuration
from setuptools.dist import Distribution

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_build_backend_applies_pyproject_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # setuptools' deprecations (a TOML-table license) are warnings
        dist = apply_configuration(Distribution(), PYPROJECT)
    assert dist.metadata.license_expression == "Apache-2.0"
    assert dist.metadata.license is None


def test_license_is_a_canonical_spdx_string_and_no_license_classifier_repeats_it() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert canonicalize_license_expression(project["license"]) == project["license"]
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]  # PEP 639 forbids both


def test_the_build_system_needs_a_setuptools_with_pep_639_strings() -> None:
    (requirement,) = (Requirement(r) for r in tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["build-system"]
                      ["requires"] if r.startswith("setuptools"))
    assert not requirement.specifier.contains("76.1.0")  # refuses `license = "..."`: "must be valid exactly by one"
    assert requirement.specifier.contains("77.0.1")  # the first release on PyPI with PEP 639 (77.0.0 was yanked)
    assert requirement.specifier.contains(Version(version("setuptools")))  # the one these tests ran with
