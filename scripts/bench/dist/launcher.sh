# launcher.sh - sourced by the dist benchmarks: from $family (mpich or
# openmpi) and $procs, sets $launch (the launcher's command line) and
# $rankvar (the variable naming a process's rank).  Exits 2 on another
# family, naming the calling script.  --bind-to none: Open MPI binds each
# process to a core by default, which on a node shared with other work
# keeps a process waiting for its core.
case $family in
mpich) launch="mpiexec.mpich -n $procs" ; rankvar=PMI_RANK ;;
openmpi) launch="mpirun.openmpi --oversubscribe --bind-to none -np $procs"
         rankvar=OMPI_COMM_WORLD_RANK
         export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
*) echo "$(basename "$0"): LAUNCHER is mpich or openmpi" >&2; exit 2 ;;
esac
