"""Runs a user measured on their own rig (issue 38 item 2, "calibrate to my rig"): read a pasted
benchmark (``paste``), check it against the physics of the setup (``check``), and turn accepted runs into
a per-device efficiency factor that scales that user's speed answers (``calibrate``)."""
