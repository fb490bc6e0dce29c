"""mtpcheck's Python side (placeholder package root: the adapters of the
`python` backend live in mtpcheck.adapters)."""
