"""The cards: every sentence a reply carries is written here (from ``locales/``)."""
