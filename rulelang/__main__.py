"""``python -m rulelang ...`` runs the command line (see ``rulelang.cli``)."""
from rulelang.cli import main

if __name__ == "__main__":
    main()
