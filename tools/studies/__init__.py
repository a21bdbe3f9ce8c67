"""Sections of docs/validation.md, one module per published study."""
