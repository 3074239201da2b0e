"""The exceptions nonceforge raises, one hierarchy for every module.

Bad arguments are ``TypeError`` (the wrong type) or ``ValueError`` (the rule
broken, named in the text), as Python code expects. Everything nonceforge
refuses on purpose is a ``NonceforgeError``.
"""

from __future__ import annotations

__all__ = [
    "ClockBehindError",
    "DisabledError",
    "ExhaustedError",
    "InvalidTag",
    "LeaseAllTakenError",
    "LeaseError",
    "LeaseLostError",
    "LeaseRefusedError",
    "LeaseTimeoutError",
    "LeaseUnreachableError",
    "NonceReuseError",
    "NonceforgeError",
    "UnknownIdError",
]


class NonceforgeError(Exception):
    """What nonceforge refused to do."""


class DisabledError(NonceforgeError):
    """The generator does not issue: disabled, or its lease may have lapsed, was lost or released."""


class ClockBehindError(NonceforgeError):
    """The clock is behind the last value issued (or the lease's floor) by more than the generator waits."""


class ExhaustedError(NonceforgeError):
    """The epoch or a millisecond's counter space is used up."""


class NonceReuseError(NonceforgeError):
    """The sanitizer refused a (key, nonce) it sealed with before (or, with check_open, a replay)."""


class UnknownIdError(NonceforgeError, ValueError):
    """An external id this codec did not make (made up, another type or key, or a stored random half)."""


class LeaseError(NonceforgeError):
    """A machine-id lease could not be taken, kept or released."""


class LeaseUnreachableError(LeaseError, ConnectionError):
    """The lease store could not be reached."""


class LeaseTimeoutError(LeaseError, TimeoutError):
    """The lease store did not answer in time."""


class LeaseAllTakenError(LeaseError):
    """Every machine id of the range is held by another member."""


class LeaseLostError(LeaseError):
    """The lease is gone (taken, evicted, or the store lost or rolled back its data)."""


class LeaseRefusedError(LeaseError, PermissionError):
    """The lease store refused the request (credentials, permissions)."""


def _invalid_tag() -> type[Exception]:
    """cryptography's own class when it is installed, so code that switched its
    import to nonceforge.aead keeps catching what it caught; else ours."""
    try:
        from cryptography.exceptions import InvalidTag as theirs
    except ImportError:  # exercised by the wheel test, whose venv has no cryptography

        class InvalidTag(NonceforgeError):
            """Decryption failed: the message was forged or damaged."""

        return InvalidTag
    return theirs


#: Raised by the AEAD drop-ins' decrypt on a forged or damaged message.
InvalidTag: type[Exception] = _invalid_tag()
