"""The corrected command: the pasted argv with the flag changes applied (any spelling), or Ollama's lines."""

from __future__ import annotations

import shlex

from core.diagnose_flags import LaunchFlags
from core.diagnose_types import FlagChange

# every spelling of a flag the fixes may change, so the change replaces it wherever the user put it
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "-c": ("-c", "--ctx-size"),
    "-ngl": ("-ngl", "--gpu-layers", "--n-gpu-layers"),
    "-ctk": ("-ctk", "--cache-type-k"),
    "-ctv": ("-ctv", "--cache-type-v"),
    "-ts": ("-ts", "--tensor-split"),
    "-ot": ("-ot", "--override-tensor"),
    "--n-cpu-moe": ("-ncmoe", "--n-cpu-moe"),
    "--cpu-moe": ("-cmoe", "--cpu-moe"),
    "-fa": ("-fa", "--flash-attn"),
    "--max-model-len": ("--max-model-len",),
    "--kv-cache-dtype": ("--kv-cache-dtype",),
    "--tensor-parallel-size": ("-tp", "--tensor-parallel-size"),
    "--spec-draft-n-max": ("--draft-max", "--draft", "--draft-n", "--spec-draft-n-max"),
    "--spec-draft-n-min": ("--draft-min", "--draft-n-min", "--spec-draft-n-min"),
}
_SWITCHES = frozenset({"--cpu-moe"})
_ENV_FLAGS = frozenset({"OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_CONTEXT_LENGTH"})


def apply_changes(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[str, ...]:
    """The pasted argv with the changes: each flag replaced where it stood (any spelling), else appended."""
    if flags.engine == "ollama":
        return _apply_ollama(flags, changes)
    argv = list(flags.argv)
    for change in changes:
        if change.reason == "renamed":  # keep the value, change the name
            argv = [change.flag if tok in _SPELLINGS.get(change.flag, ()) else tok for tok in argv]
            continue
        spellings = _SPELLINGS.get(change.flag, (change.flag,))
        out: list[str] = []
        done = False
        i = 0
        while i < len(argv):
            tok = argv[i]
            name = tok.split("=", 1)[0]
            if name in spellings:
                has_value = "=" not in tok and change.flag not in _SWITCHES and i + 1 < len(argv)
                if change.flag == "-fa" and has_value and argv[i + 1].startswith("-"):
                    has_value = False  # a bare "-fa"
                if change.value is not None and not done:
                    out += [name, change.value] if change.flag not in _SWITCHES else [name]
                    done = True
                i += 2 if has_value else 1
                continue
            out.append(tok)
            i += 1
        if not done and change.value is not None:
            out += [change.flag, change.value]
        argv = out
    return (shlex.join(argv),)


def _apply_ollama(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[str, ...]:
    """Ollama takes its cache settings from the server's environment and num_ctx/num_gpu as Modelfile
    parameters: the server line (when the environment changes), then the Modelfile or the run line."""
    env = {k: v for k, v in flags.env if k in _ENV_FLAGS}
    params: dict[str, str] = {}
    if flags.context:
        params["num_ctx"] = str(flags.context)
    if flags.gpu_layers is not None:
        params["num_gpu"] = str(flags.gpu_layers)
    asked = dict(params)
    for change in changes:
        if change.value is None:
            continue
        if change.flag in _ENV_FLAGS:
            env[change.flag] = change.value
        else:
            params[change.flag] = change.value
    lines: tuple[str, ...] = ()
    if env != {k: v for k, v in flags.env if k in _ENV_FLAGS}:
        lines += (" ".join((*(f"{k}={v}" for k, v in env.items()), "ollama", "serve")),)
    modelfile = bool(flags.argv) and flags.argv[0].lower() == "from"
    if modelfile or params != asked:
        lines += (f"FROM {flags.model_ref}", *(f"PARAMETER {k} {v}" for k, v in params.items()))
    else:
        lines += (f"ollama run {flags.model_ref}",)
    return lines


__all__ = ["apply_changes"]
