"""The client side of a service: readiness, /metrics, smoke requests, the minicpmvocr driver."""
