"""Launch commands that run: llama.cpp, vLLM, Ollama and the tools beside them.

Rule: every word of a command FitBot hands back is shell-quoted, and every flag is one the engine accepts."""
