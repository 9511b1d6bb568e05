"""Keeping credentials out of everything that leaves livescore: errors, logs, spans, reprs.

Shared by the judge (its API key, URL credentials, header values) and the dashboard sinks
(Phoenix's bearer key, Langfuse's keys), which quote what a server answers.

Two rules. Credentials never reach the HTTP client in a URL (userinfo becomes a header, so
the client's own "HTTP Request: POST <url>" log line has nothing to leak). And any text a
server sends back is masked *before* it is cut to an excerpt, so a cut can never leave a
secret's first characters behind.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ("MASK", "Redactor", "header_secrets", "redact_url", "split_credentials")

MASK = "***"

# Keys the judge does not hold but a server may quote (another project's key): keep the
# first two characters after ``sk-`` so a reader can tell keys apart, mask the rest.
_OPENAI_KEY = re.compile(r"(sk-[A-Za-z0-9_\-*]{2})[A-Za-z0-9_\-*]+")
_URL_USERINFO = re.compile(r"(//)[^/@\s]*@")
_AUTH_VALUE = re.compile(r"\b((?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=\-]+", re.IGNORECASE)
# What may follow a secret's prefix when a server quotes it cut short.
_SECRET_TAIL = r"[^\s\"'<>,;]*"
_PREFIX_LENGTH = 8
_SENSITIVE_HEADER = re.compile(r"auth|key|token|secret|cookie|password|signature", re.I)


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The values of the headers named like credentials, to mask wherever they may show.

    For a ``Bearer`` or ``Basic`` value, the token after the scheme too (a server may
    quote it alone).

    Example:
        >>> header_secrets({"Authorization": "Bearer k-0123456789", "x-team": "search"})
        ['Bearer k-0123456789', 'k-0123456789']
    """
    found: list[str] = []
    for name, value in headers.items():
        if _SENSITIVE_HEADER.search(name) and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token.strip())
    return found


def redact_url(url: str) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@``.

    Example:
        >>> redact_url("http://me:s3cret@gateway:8080/v1")
        'http://***@gateway:8080/v1'
    """
    return _URL_USERINFO.sub(rf"\1{MASK}@", url)


def split_credentials(url: str) -> tuple[str, str | None, tuple[str, ...]]:
    """Move the userinfo out of a URL.

    Returns the URL without it, the ``Authorization`` header value that carries it (HTTP
    Basic, as the HTTP client itself would have sent it), and the secrets to mask.

    Example:
        >>> split_credentials("http://me:s3cret@host/v1")
        ('http://host/v1', 'Basic bWU6czNjcmV0', ('s3cret', 'bWU6czNjcmV0'))
        >>> split_credentials("http://host/v1")
        ('http://host/v1', None, ())
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, ()
    userinfo, _, host = parts.netloc.rpartition("@")
    raw_user, _, raw_password = userinfo.partition(":")
    user, password = unquote(raw_user), unquote(raw_password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    # The user name is only a secret when it is the whole credential (``https://TOKEN@host``);
    # masking an ordinary one ("judge", "admin") would garble every message that says it.
    secrets = (password, raw_password, token) if password else (user, raw_user, token)
    unique = tuple(dict.fromkeys(s for s in secrets if s))
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}", unique


class Redactor:
    """Masks a judge's secrets (and anything that looks like a credential) in text.

    Args:
        secrets: The exact strings to mask: the API key, URL credentials, header values.
            Strings under four characters are ignored (they would mask ordinary words).

    Example:
        >>> redact = Redactor(["sk-live-0123456789abcdef"])
        >>> redact("bad key sk-live-0123456789abcdef, try again")
        'bad key ***, try again'
        >>> redact("Authorization: Bearer abc.def")
        'Authorization: Bearer ***'
        >>> redact.excerpt("x" * 5 + " key sk-live-0123456789abcdef", limit=16)
        'xxxxx key ***'
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        distinct = {s for s in secrets if s and len(s) >= 4}
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = tuple(sorted(distinct, key=len, reverse=True))
        prefixes = sorted(
            {re.escape(s[:_PREFIX_LENGTH]) for s in distinct if len(s) >= 12}, reverse=True
        )
        # A server may echo a secret cut short (its own excerpt): mask any long enough
        # prefix of one, with whatever key-like characters follow it.
        self._prefixes = re.compile(f"(?:{'|'.join(prefixes)}){_SECRET_TAIL}") if prefixes else None

    def __call__(self, text: str) -> str:
        """``text`` with every secret masked."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        if self._prefixes is not None:
            text = self._prefixes.sub(MASK, text)
        text = _OPENAI_KEY.sub(rf"\1{MASK}", text)
        text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
        return _AUTH_VALUE.sub(rf"\1{MASK}", text)

    def excerpt(self, text: str, limit: int) -> str:
        """``text`` masked, on one line, then cut to ``limit`` characters (mask first)."""
        text = " ".join(self(text).split())
        return text if len(text) <= limit else text[:limit] + "…"
