"""The speed model: decode, prefill, time to first token and serving, from bandwidth and FLOPs.

Rule: every constant here cites its source or says it was fitted, and on which rows."""
