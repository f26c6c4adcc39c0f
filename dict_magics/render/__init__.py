"""Only ``panel.py`` is left here: the panel moves it into ``frontends/``. The modules beside
it re-export, from the records that now render themselves, what it imports; they go with it."""
