"""The error table and the log scanner behind `inv diagnose`."""
