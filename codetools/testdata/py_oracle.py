# py_oracle.py ROOT FILE LINE COL prints, as JSON, the definitions and the
# references (declaration included) of the symbol at FILE:LINE:COL (1-based,
# column in bytes), asked of jedi: an analyser independent of pyright, the
# oracle its answers are compared with, since pyright's command line only
# checks types.
import json
import os
import sys

import jedi

root, file, line, col = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
project = jedi.Project(root)
script = jedi.Script(path=os.path.join(root, file), project=project)


def at(name):
    return "%s:%d:%d" % (os.path.relpath(str(name.module_path), root), name.line, name.column + 1)


print(json.dumps({
    "definition": [at(n) for n in script.goto(line, col - 1, follow_imports=True)],
    "references": [at(n) for n in script.get_references(line, col - 1, scope="project")],
}))
