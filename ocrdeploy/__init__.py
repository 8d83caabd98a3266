"""ocrdeploy: take a GPU host from bare to a verified, serving document-OCR stack."""

__version__ = "0.1.0"
