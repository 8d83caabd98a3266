"""Model weights: download on the host (Hugging Face, ModelScope, the layout tar, a local copy) and
verify them (required files, sha256 against the release manifest and the hub's LFS metadata)."""
