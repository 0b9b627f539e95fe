"""What a model's own files say (config.json, GGUF headers) → ``ModelSpec``."""
