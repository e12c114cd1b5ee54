// Replaced by the sandbox sources.
