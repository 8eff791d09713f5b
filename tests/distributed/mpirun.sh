#!/bin/sh
# mpirun.sh MPIEXEC ARGS...: runs MPIEXEC --oversubscribe ARGS (tests may start more ranks than
# there are cores), adding --allow-run-as-root when run as root (CI), which Open MPI refuses
# otherwise.
mpiexec="$1"
shift
if [ "$(id -u)" -eq 0 ]; then
  exec "$mpiexec" --allow-run-as-root --oversubscribe "$@"
fi
exec "$mpiexec" --oversubscribe "$@"
