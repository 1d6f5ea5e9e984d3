# Writes the gpukern-report executable: bench/report/gpukern_report.py with its first
# line replaced by a shebang naming PYTHON (an interpreter that has matplotlib).
file(READ ${IN} text)
string(REGEX REPLACE "^#![^\n]*\n" "" text "${text}")
file(WRITE ${OUT} "#!${PYTHON}\n${text}")
file(CHMOD ${OUT} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
