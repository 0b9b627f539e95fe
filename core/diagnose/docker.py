"""``docker run`` lines of the engines' official images, read as the command the container runs.

The image decides the engine and what the arguments after it are (the image's entrypoint):
``vllm/vllm-openai`` runs ``vllm serve`` (``--model X`` or a positional model), the llama.cpp
``server`` images (``ghcr.io/ggml-org/llama.cpp:server``, ``:server-cuda``, ..., and locally built
``local/llama.cpp:server-cuda``) run ``llama-server``, ``ollama/ollama`` runs ``ollama serve`` and takes
its model from a ``docker exec … ollama run TAG`` line. Docker's own options before the image are
skipped; ``-e``/``--env`` assignments are kept as the environment (``OLLAMA_CONTEXT_LENGTH``,
``CUDA_VISIBLE_DEVICES``). Images: docs.vllm.ai deployment/docker, ggml-org/llama.cpp ``docs/docker.md``,
ollama/ollama ``docs/docker.md``.
"""

from __future__ import annotations

import re
from typing import Literal

DockerEngine = Literal["llama.cpp", "vllm", "ollama"]

_IMAGE = re.compile(
    r"^(?:(?:docker\.io|ghcr\.io|local)/)?(?:vllm/vllm-openai|ggml-org/llama\.cpp|ggerganov/llama\.cpp|llama\.cpp"
    r"|ollama/ollama)(?::[\w.-]+)?$",
    re.I,
)
# a docker run line whose image is one of the above (the line is then this module's to read)
DOCKER_START = re.compile(
    r"\b(?:sudo\s+)?(?:docker|podman)\s+run\s(?=.*?(?:vllm/vllm-openai|llama\.cpp:(?:server|full|light)|ollama/ollama))",
    re.I,
)
_OLLAMA_RUN = re.compile(r"\bollama\s+(?:run|pull)\s+(\S+)")
# docker options that take a value (the next token), so a value is never taken for the image
_VALUE_OPTIONS = {
    "-v", "--volume", "-p", "--publish", "-e", "--env", "--name", "--gpus", "--runtime", "--ipc", "--shm-size",
    "--entrypoint", "-u", "--user", "--network", "--net", "--device", "--group-add", "-w", "--workdir", "--env-file",
    "--mount", "--restart", "--cpus", "--memory", "-m", "--ulimit", "--security-opt", "--label", "-l", "--add-host",
    "--hostname", "-h", "--platform", "--pull", "--cap-add", "--cidfile", "--log-driver", "--log-opt",
}  # fmt: skip


def engine_of_image(image: str) -> DockerEngine | None:
    if not _IMAGE.match(image):
        return None
    low = image.lower()
    if "vllm" in low:
        return "vllm"
    if "ollama" in low:
        return "ollama"
    tag = low.rsplit(":", 1)[1] if ":" in low else ""
    return "llama.cpp" if tag.startswith("server") else None  # :full / :light run other programs


def container_command(tokens: list[str], text: str) -> tuple[DockerEngine, list[str], list[tuple[str, str]]] | None:
    """(engine, the argv the container runs, its -e environment) of ``docker run … IMAGE ARGS``; None when the
    image is none of the engines' (or a llama.cpp image that does not run the server)."""
    env: list[tuple[str, str]] = []
    i = 2 if len(tokens) > 1 and tokens[1] == "run" else 1
    while i < len(tokens):
        token = tokens[i]
        name, eq, inline = token.partition("=")
        if not token.startswith("-"):
            break
        value = inline if eq else tokens[i + 1] if i + 1 < len(tokens) and name in _VALUE_OPTIONS else ""
        if name in ("-e", "--env") and "=" in value:
            key, _, val = value.partition("=")
            env.append((key, val))
        i += 1 if eq or name not in _VALUE_OPTIONS else 2
    if i >= len(tokens):
        return None
    engine = engine_of_image(tokens[i])
    rest = tokens[i + 1 :]
    if engine == "vllm":
        return engine, ["vllm", "serve", *rest], env
    if engine == "llama.cpp":
        return engine, ["llama-server", *rest], env
    if engine == "ollama":
        found = _OLLAMA_RUN.search(text)
        return engine, (["ollama", "run", found.group(1)] if found else ["ollama", "serve"]), env
    return None


__all__ = ["DOCKER_START", "container_command", "engine_of_image"]
