"""The corrected command: the pasted argv with the flag changes applied (any spelling), or Ollama's lines.

Every word of it comes back shell-quoted and its model reference must be a name the engine accepts
(``core.launch.safety``): a paste is untrusted, and in a group another user may run what comes back.
"""

from __future__ import annotations

from core.diagnose.flags import LaunchFlags
from core.diagnose.tables import LLAMA_VALUE
from core.diagnose.types import FlagChange
from core.launch.safety import env_word, is_ollama_ref, is_path, is_repo_id, shell_line
from core.notes import Note, note

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


def corrected_command(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[tuple[str, ...], Note | None]:
    """The corrected lines, or none and why: a model reference that is no name the engine takes, or a
    word no quoting can carry (a control character)."""
    bad = _bad_reference(flags)
    if bad is not None:
        return (), note("unsafe_ref", ref=bad[:80])
    if not changes:
        return (), None
    lines = apply_changes(flags, changes)
    return (lines, None) if lines else ((), note("unsafe_word"))


def _bad_reference(flags: LaunchFlags) -> str | None:
    """The model reference the engine would not take as a name, if any."""
    ref = flags.model_ref or ""
    if flags.engine == "ollama":
        return None if is_ollama_ref(ref) else ref
    if flags.engine == "vllm":  # a repo id or a local folder
        local = ref.startswith(("/", "./", "../", "~/")) and is_path(ref)
        return None if is_repo_id(ref) or local else ref
    repos = [value for _, value in _values(flags.argv, LLAMA_VALUE["hf"])]
    if repos:  # -hf takes a repo id with an optional :QUANT
        return next((value for value in repos if not is_repo_id(value)), None)
    return None if is_path(ref) else ref  # -m takes any file name, one quoted word


def _values(argv: tuple[str, ...], spellings: tuple[str, ...]) -> list[tuple[str, str]]:
    """(flag, value) of each ``--flag value`` or ``--flag=value`` with one of these spellings."""
    out: list[tuple[str, str]] = []
    for i, word in enumerate(argv):
        name, eq, inline = word.partition("=")
        if name in spellings:
            if eq:
                out.append((name, inline))
            elif i + 1 < len(argv):
                out.append((name, argv[i + 1]))
    return out


def apply_changes(flags: LaunchFlags, changes: list[FlagChange]) -> tuple[str, ...]:
    """The pasted argv with the changes: each flag replaced where it stood (any spelling), else appended;
    () when a word cannot be quoted safely."""
    if flags.engine == "ollama":
        return _apply_ollama(flags, changes)
    env, argv = _env_words(flags), list(flags.argv[len(flags.env) :])
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
    line = shell_line(argv)
    if env is None or line is None:
        return ()
    return (" ".join((*env, line)),)


def _env_words(flags: LaunchFlags, env: dict[str, str] | None = None) -> list[str] | None:
    """The environment assignments as shell words, values quoted; None if one cannot be."""
    words = [env_word(k, v) for k, v in (env.items() if env is not None else flags.env)]
    return None if None in words else [w for w in words if w is not None]


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
        words = _env_words(flags, env)
        if words is None:
            return ()
        lines += (" ".join((*words, "ollama", "serve")),)
    ref = flags.model_ref or ""
    pasted = flags.argv[len(flags.env) :]
    modelfile = bool(pasted) and pasted[0].lower() == "from"
    if modelfile or params != asked:  # a Modelfile is no shell script, but a word must not start a new line
        if not all(is_path(x) for x in (ref, *params.values())):
            return ()
        lines += (f"FROM {ref}", *(f"PARAMETER {k} {v}" for k, v in params.items()))
    else:
        run = shell_line(("ollama", "run", ref))
        if run is None:
            return ()
        lines += (run,)
    return lines


__all__ = ["apply_changes", "corrected_command"]
