"""Layers that let code written for another framework run on anfora (see each module)."""
