"""Launching and watching an inference service: argv per backend, detached start on the host,
readiness, the restart policy, service records and /metrics."""
