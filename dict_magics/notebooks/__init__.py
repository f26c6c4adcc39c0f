"""The demo notebooks, installed as ``dict_magics.notebooks`` so ``dict-magics demo`` finds them."""
