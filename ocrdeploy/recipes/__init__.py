"""What to install and run for each stack; the thresholds preflight checks against live here."""

from .registry import Recipe, Requirements, get_recipe, recipe_names

__all__ = ["Recipe", "Requirements", "get_recipe", "recipe_names"]
