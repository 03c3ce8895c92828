// quire: the command-line tool (issue 5).
print("quire: not built yet")
