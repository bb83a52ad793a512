"""The package's PEP 517 build backend: builds the pure-Python wheel with the standard library
alone, so `pip install ./clients/python` needs nothing to be downloaded (offline and air-gapped
machines included). Metadata comes from pyproject.toml's [project] table (PEP 621, the subset
this package uses); the wheel follows the binary distribution format (PEP 427, PEP 491)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import zipfile
from typing import Any, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "src")


def _project() -> Dict[str, Any]:
    """pyproject.toml's [project] table."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        text = f.read().decode("utf-8")
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        return _simple_project(text)
    return dict(tomllib.loads(text)["project"])


def _simple_project(text: str) -> Dict[str, Any]:
    """The [project] table read without tomllib (Python 3.9 and 3.10)."""
    project = _simple_table(text, "project")
    extras = _simple_table(text, "project.optional-dependencies")
    if extras:
        project["optional-dependencies"] = extras
    return project


def _simple_table(text: str, name: str) -> Dict[str, Any]:
    """A TOML table of `key = "string"`, `key = [ "strings" ]` and `key = { … }` lines (before 3.11)."""
    out: Dict[str, Any] = {}
    table = None
    lines = iter(text.splitlines())
    for line in lines:
        header = re.match(r"^\[([^\]]+)\]\s*$", line)
        if header:
            table = header.group(1).strip()
            continue
        if table != name or "=" not in line:
            continue
        key, _, value = (part.strip() for part in line.partition("="))
        if value.startswith("[") and not value.endswith("]"):
            while not value.endswith("]"):
                value += next(lines).strip()
        if value.startswith('"'):
            out[key] = value.strip('"')
        elif value.startswith("["):
            out[key] = re.findall(r'"([^"]*)"', value)
    return out


def _metadata(project: Dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, requirements in dict(project.get("optional-dependencies") or {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    readme = project.get("readme")
    if isinstance(readme, str):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            return "\n".join(lines) + "\n\n" + f.read()
    return "\n".join(lines) + "\n"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    project = _project()
    dist = project["name"].replace("-", "_")
    version = project["version"]
    info = f"{dist}-{version}.dist-info"
    name = f"{dist}-{version}-py3-none-any.whl"
    files: List[tuple] = []
    for folder, dirs, names in os.walk(SOURCE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        for file in sorted(names):
            if file.endswith((".py", ".typed")):
                path = os.path.join(folder, file)
                with open(path, "rb") as f:
                    files.append((os.path.relpath(path, SOURCE).replace(os.sep, "/"), f.read()))
    files.append((f"{info}/METADATA", _metadata(project).encode("utf-8")))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: hcc_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode("utf-8")))
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files:
            entry = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return name
