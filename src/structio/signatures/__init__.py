"""Signatures: typed inputs and outputs of a model call, plus instructions."""

from structio.signatures.field import (
    MISSING,
    Constraints,
    InputField,
    OutputField,
    SignatureField,
    infer_prefix,
)
from structio.signatures.history import History
from structio.signatures.signature import Signature, SignatureMeta, make_signature

__all__ = [
    "MISSING",
    "Constraints",
    "History",
    "InputField",
    "OutputField",
    "Signature",
    "SignatureField",
    "SignatureMeta",
    "infer_prefix",
    "make_signature",
]
