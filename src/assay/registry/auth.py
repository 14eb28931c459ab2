"""Registry credentials: `~/.docker/config.json` and the bearer-token challenge.

Credentials come, as docker finds them, from `credHelpers[registry]`, else `auths`
(`auth`: base64 `user:password`, or an `identitytoken`), else `credsStore`; a helper is
run as `docker-credential-NAME get` with the registry on standard input. A secret never
appears in a message or a log.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from assay._bounded import read_if_present
from assay.errors import InputError

MAX_CONFIG_BYTES: Final = 1024 * 1024
HELPER_TIMEOUT: Final = 30.0
_HUB_KEYS: Final = ("https://index.docker.io/v1/", "index.docker.io", "docker.io")


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    identity_token: str | None = field(default=None, repr=False)
    """A refresh token (`identitytoken`): exchanged for an access token, never sent as a
    password."""


def config_path() -> Path:
    directory = os.environ.get("DOCKER_CONFIG")
    base = Path(directory) if directory else Path.home() / ".docker"
    return base / "config.json"


def _keys(registry: str) -> list[str]:
    if registry == "registry-1.docker.io":
        return [*_HUB_KEYS, registry]
    return [registry, f"https://{registry}", f"http://{registry}"]


def _read_config(path: Path) -> dict[str, object] | None:
    data = read_if_present(path, MAX_CONFIG_BYTES)
    if data is None:
        return None
    try:
        config = json.loads(data)
    except ValueError as error:
        raise InputError(str(path), f"expected JSON: {error}") from None
    if not isinstance(config, dict):
        raise InputError(f"{path}: $", "expected an object")
    return config


def _table(config: dict[str, object], name: str) -> dict[str, object]:
    """An object of the docker config (`auths`, `credHelpers`); empty when absent or not one."""
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def _nonempty(value: object) -> str:
    """A string setting, or "" when it is absent, empty or not a string."""
    return value if isinstance(value, str) else ""


def _helper_for(config: dict[str, object], registry: str) -> tuple[str, str] | None:
    """The `credHelpers` entry that names the registry: (helper, server key)."""
    helpers = _table(config, "credHelpers")
    for key in _keys(registry):
        helper = helpers.get(key)
        if isinstance(helper, str):
            return helper, key
    return None


def _from_auths(config: dict[str, object], registry: str, path: Path) -> Credentials | None:
    auths = _table(config, "auths")
    for key in _keys(registry):
        entry = auths.get(key)
        found = _from_auth(entry, f"{path}: $.auths[{key!r}]") if isinstance(entry, dict) else None
        if found is not None:
            return found
    return None


def credentials_for(registry: str, path: Path | None = None) -> Credentials | None:
    """The credentials docker would use for `registry`, or None (anonymous)."""
    path = path or config_path()
    config = _read_config(path)
    if config is None:
        return None
    helper = _helper_for(config, registry)
    if helper is not None:
        return run_helper(*helper)
    found = _from_auths(config, registry, path)
    if found is not None:
        return found
    store = _nonempty(config.get("credsStore"))
    if store:
        return run_helper(store, _keys(registry)[0], missing_ok=True)
    return None


def _from_auth(entry: dict[str, object], where: str) -> Credentials | None:
    token = _nonempty(entry.get("identitytoken"))
    auth = _nonempty(entry.get("auth"))
    username = entry.get("username")
    password = entry.get("password")
    if auth:
        username, password = _user_password(auth, f"{where}.auth")
    if token:
        return Credentials(username if isinstance(username, str) else None, None, token)
    if isinstance(username, str) and isinstance(password, str):
        return Credentials(username, password)
    return None


def _user_password(auth: str, where: str) -> tuple[str, str]:
    """docker's `auth`: base64 of `user:password`."""
    try:
        user, sep, secret = base64.b64decode(auth, validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        raise InputError(where, "expected base64 of user:password") from None
    if not sep:
        raise InputError(where, "expected base64 of user:password")
    return user, secret


def run_helper(name: str, server: str, *, missing_ok: bool = False) -> Credentials | None:
    """`docker-credential-NAME get` for `server`; errors name the helper, never a secret."""
    program = f"docker-credential-{name}"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise InputError("credHelpers", f"expected a helper name, got {name!r}")
    executable = shutil.which(program)
    if executable is None:
        if missing_ok:
            return None
        raise InputError(program, "the credential helper is not on PATH")
    done = _ask_helper(executable, server, program)
    if done.returncode != 0:
        if b"credentials not found" in done.stdout.lower() + done.stderr.lower():
            return None
        raise InputError(program, f"the credential helper failed (exit {done.returncode})")
    return _helper_answer(done.stdout, program)


def _ask_helper(executable: str, server: str, program: str) -> subprocess.CompletedProcess[bytes]:
    """The helper's `get` for `server`, run as docker runs it (its answer on stdout)."""
    try:
        return subprocess.run(  # noqa: S603 - a named helper, as docker runs it
            [executable, "get"],
            input=server.encode(),
            capture_output=True,
            timeout=HELPER_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(
            program, f"the credential helper did not answer ({type(error).__name__})"
        ) from None


def _helper_answer(stdout: bytes, program: str) -> Credentials:
    try:
        answer = json.loads(stdout)
        username, secret = answer["Username"], answer["Secret"]
    except (ValueError, KeyError, TypeError):
        raise InputError(program, 'expected {"Username": ..., "Secret": ...} on stdout') from None
    if username == "<token>":
        return Credentials(None, None, secret)
    return Credentials(username, secret)


_PARAM: Final = re.compile(r'([A-Za-z]+)="([^"]*)"|([A-Za-z]+)=([^,\s]*)')


@dataclass(frozen=True, slots=True)
class Challenge:
    scheme: str
    params: dict[str, str]


def parse_challenge(header: str) -> Challenge | None:
    """`Bearer realm="...",service="...",scope="..."` (or `Basic realm=...`)."""
    scheme, _, rest = header.strip().partition(" ")
    if not scheme:
        return None
    params = {}
    for match in _PARAM.finditer(rest):
        key = match.group(1) or match.group(3)
        value = match.group(2) if match.group(1) else match.group(4)
        params[key.lower()] = value
    return Challenge(scheme.lower(), params)
