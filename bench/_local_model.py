"""The local judge's model and server environment: kept in the package, where
``livescore demo --local-judge`` uses them too (:mod:`livescore.demo._local_model`)."""

from livescore.demo._local_model import (
    MODEL_FILE,
    MODEL_SHA256,
    MODEL_SIZE,
    PART_VERSION,
    PARTS,
    SERVER_PACKAGES,
    cache_dir,
    ensure_judge_venv,
    ensure_model,
    join_parts,
)

__all__ = (
    "MODEL_FILE",
    "MODEL_SHA256",
    "MODEL_SIZE",
    "PARTS",
    "PART_VERSION",
    "SERVER_PACKAGES",
    "cache_dir",
    "ensure_judge_venv",
    "ensure_model",
    "join_parts",
)
