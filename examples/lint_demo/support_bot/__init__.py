"""Acme support bot (demo app for `promptcache lint`)."""
