"""What ``verify`` runs on: torch version, CUDA and driver versions, device names.

``probe()`` imports torch (in the calling process, which only spawns the claims;
it never runs one) and raises :class:`TorchMissing` when torch cannot be imported.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from typing import Any

from torchcopy_lint import __version__
from torchcopy_lint.runtime import INSTALL_HINT

ACCELERATORS = ("cuda", "mps", "xpu")
KNOWN_DEVICE_TYPES = ("cpu", *ACCELERATORS)


class TorchMissing(RuntimeError):
    """torch cannot be imported; the message says what to install."""


def import_torch() -> Any:
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - ImportError, or a broken install (OSError on a missing library)
        reason = " ".join(str(error).split()) or type(error).__name__
        raise TorchMissing(
            f"`verify` runs every rule's claim with real PyTorch, which cannot be imported here ({reason}). "
            f"Install it with: {INSTALL_HINT}"
        ) from None
    return torch


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _nvidia_smi_driver() -> str | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    versions = sorted({line.strip() for line in out.stdout.splitlines() if line.strip()})
    return ", ".join(versions) if out.returncode == 0 and versions else None


def _libcuda_driver_api() -> str | None:
    """The CUDA version the installed driver supports (cuDriverGetVersion), e.g. '12.4'."""
    try:
        import ctypes

        libcuda = ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
        version = ctypes.c_int()
        if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def cuda_driver() -> str | None:
    """'driver 550.54.15 (CUDA 12.4)', whatever parts can be found."""
    parts = []
    smi = _nvidia_smi_driver()
    if smi:
        parts.append(f"driver {smi}")
    api = _libcuda_driver_api()
    if api:
        parts.append(f"supports CUDA {api}")
    return ", ".join(parts) or None


def device_available(torch: Any, kind: str) -> bool:
    if kind == "cpu":
        return True
    if kind == "mps":
        backend = getattr(torch.backends, "mps", None)
        return bool(backend is not None and backend.is_available())
    module = getattr(torch, kind, None)
    try:
        return bool(module is not None and module.is_available())
    except Exception:  # noqa: BLE001 - a broken driver means "not available"
        return False


def available_devices(torch: Any) -> list[str]:
    """cpu plus every accelerator torch reports available, in a fixed order."""
    return [kind for kind in KNOWN_DEVICE_TYPES if device_available(torch, kind)]


def unavailable_reason(device: str, environment: dict[str, Any]) -> str | None:
    """Why a device asked for (``cuda``, ``cuda:1``, ``mps``) cannot run here, from the probed environment; None if it can."""
    kind, _, index = device.partition(":")
    available = environment.get("available_devices", [])
    if kind not in available:
        build = ""
        if kind == "cuda" and environment.get("torch_cuda") is None and not environment.get("torch_hip"):
            build = f"; torch {environment.get('torch')} is a CPU-only build"
        return f"{kind} is not available here (torch reports: {', '.join(available) or 'nothing'} available{build})"
    count = len(environment.get("device_names", {}).get(kind, [])) if kind != "cpu" else 1
    if index and int(index) >= count:
        return f"{device} does not exist here: torch sees {count} {kind} device(s)"
    return None


def _device_names(torch: Any, kind: str) -> list[str]:
    if kind == "cpu":
        return [f"{cpu_name()} ({os.cpu_count()} logical cores, {platform.machine()})"]
    if kind == "mps":
        return [f"Apple MPS (macOS {platform.mac_ver()[0]})"]
    module = getattr(torch, kind)
    names = []
    for index in range(module.device_count()):
        name = module.get_device_name(index)
        if kind == "cuda":
            major, minor = module.get_device_capability(index)
            memory = module.get_device_properties(index).total_memory / 2**30
            name = f"{name} (compute capability {major}.{minor}, {memory:.0f} GiB)"
        names.append(f"{kind}:{index}: {name}")
    return names


def probe() -> dict[str, Any]:
    """The environment header: versions and the available devices with their names."""
    torch = import_torch()
    available = available_devices(torch)
    cudnn = None
    if torch.backends.cudnn.is_available():
        cudnn = str(torch.backends.cudnn.version())
    info: dict[str, Any] = {
        "torchcopy_lint": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch_cuda": torch.version.cuda,  # the CUDA torch was built with (None: CPU-only build)
        "torch_hip": getattr(torch.version, "hip", None),
        "cudnn": cudnn,
        "cuda_driver": cuda_driver() if "cuda" in available else None,
        "available_devices": available,
        "device_names": {kind: _device_names(torch, kind) for kind in available},
    }
    return info
