"""Terminal renderings (Rich) of the probe results.  Only the advisor's skins import this."""
