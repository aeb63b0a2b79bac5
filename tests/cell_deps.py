"""Which code cells of a notebook a given cell depends on, and which depend on it, read from the names each cell
defines and reads (Python's ast; IPython's % and ! lines left out).

Two tests run part of a chapter with this: the browser test runs each explorer with the cells it needs
(`needed`), and test_student runs the cells of an exercise edition that its blanks reach (`reached`) with the
cells they need, since every other cell is the master's own code on the master's own inputs, which strict nbval
runs and compares. A dependency the names do not show (a file one cell writes and another reads, an object one
cell changes in place) is missed: most often such a run then fails where the whole notebook would not, and the
test says so; in the rare other case a cell left out would have changed what a cell that runs reads.
"""

import ast


def names(source):
    """(names the code defines, names it reads from earlier cells): a name it only ever assigns is not read; one
    it updates in place (``x += 1``) is read too."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    defined, used, updated = set(), set(), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            updated.add(node.target.id)
    return defined, (used - defined) | updated


def needed(sources, wanted):
    """The indices of ``wanted`` and, for each name one of them reads, of the latest earlier cell that defines it,
    and so on for that cell; ``sources`` is {index: code} of the code cells."""
    parsed = {i: names(s) for i, s in sources.items()}
    keep, pending = set(wanted), sorted(wanted)
    while pending:
        i = pending.pop()
        for name in parsed[i][1]:
            source = max((j for j in parsed if j < i and name in parsed[j][0]), default=None)
            if source is not None and source not in keep:
                keep.add(source)
                pending.append(source)
    return keep


def reached(sources, seeds):
    """The indices of ``seeds`` and of every later cell that reads a name one of them defined (and so on), until
    a cell outside them defines that name afresh."""
    tainted, touched = set(), set(seeds)
    for i in sorted(sources):
        defined, used = names(sources[i])
        if i in touched or used & tainted:
            touched.add(i)
            tainted |= defined
        else:
            tainted -= defined
    return touched
