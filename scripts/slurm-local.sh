#!/usr/bin/env bash
# A real single-node Slurm on the loopback (munged, slurmctld, slurmd; no systemd), in a folder of its own, for tests.
#   scripts/slurm-local.sh start [DIR]   start it (DIR default /tmp/positionlab-slurm); prints `export SLURM_CONF=...`
#   scripts/slurm-local.sh stop [DIR]    cancel its jobs, wait for them, stop the daemons by their pid files
# Needs the Debian packages slurmctld slurmd slurm-client munge (scripts/setup.sh test installs them).
# Ports: 6917/6918 by default (not Slurm's 6817/6818, so a second cluster can coexist); SLURM_LOCAL_PORT overrides.
set -euo pipefail

cmd=${1:-}
dir=${2:-/tmp/positionlab-slurm}
port=${SLURM_LOCAL_PORT:-6917}
conf=$dir/slurm.conf

die() { echo "slurm-local: $*" >&2; exit 2; }

# True while the process of a pid file lives (a zombie counts as gone: stopped daemons linger as one briefly).
alive() {
    local pidfile=$1 pid state
    [ -s "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    [ -r "/proc/$pid/status" ] || return 1
    state=$(awk '/^State:/ {print $2}' "/proc/$pid/status")
    [ "$state" != "Z" ]
}

stop_pidfile() { # pidfile: SIGTERM, wait up to 10 s, then SIGKILL
    local pidfile=$1 i
    alive "$pidfile" || return 0
    kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
    for i in $(seq 100); do
        alive "$pidfile" || return 0
        sleep 0.1
    done
    kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
}

start() {
    for tool in munged mungekey slurmctld slurmd sinfo; do
        command -v "$tool" >/dev/null || die "$tool is not installed (apt-get install slurmctld slurmd slurm-client munge)"
    done
    mkdir -p "$dir"/{munge,state,spool,log}
    # munged refuses a socket folder that is not reachable by everyone, up to the root.
    chmod 755 "$dir" "$dir/munge"
    local parent
    parent=$(dirname "$(readlink -f "$dir")")
    while [ "$parent" != "/" ]; do
        [ $(( 0$(stat -c %a "$parent") & 1 )) -eq 1 ] || chmod o+x "$parent"
        parent=$(dirname "$parent")
    done
    [ -s "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
    chmod 600 "$dir/munge/munge.key"
    if ! alive "$dir/munge/munged.pid"; then
        munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
            --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
            --seed-file="$dir/munge/munged.seed" --force
    fi
    local host cpus
    host=$(hostname -s)
    cpus=$(nproc)
    cat >"$conf" <<EOF
ClusterName=positionlab
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
KillWait=5
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$conf
    alive "$dir/slurmctld.pid" || slurmctld -f "$conf"
    alive "$dir/slurmd.pid" || slurmd -f "$conf"
    # Bounded wait for the node to come up idle.
    local i state
    for i in $(seq 300); do
        state=$(sinfo -h -n "$host" -o %t 2>/dev/null || true)
        if [ "$state" = "idle" ] || [ "$state" = "mix" ] || [ "$state" = "alloc" ]; then
            echo "export SLURM_CONF=$conf"
            return 0
        fi
        sleep 0.1
    done
    die "the node did not come up idle within 30 s (state '${state:-none}'); logs in $dir/log"
}

stop() {
    [ -f "$conf" ] || { echo "slurm-local: nothing at $dir"; return 0; }
    export SLURM_CONF=$conf
    # Jobs first: slurmstepd outlives slurmd and ignores SIGTERM, so the jobs must be gone before the daemons.
    if alive "$dir/slurmctld.pid"; then
        scancel --user="$(id -un)" 2>/dev/null || true
        local i
        for i in $(seq 300); do
            [ -z "$(squeue -h 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    stop_pidfile "$dir/slurmd.pid"
    stop_pidfile "$dir/slurmctld.pid"
    stop_pidfile "$dir/munge/munged.pid"
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: scripts/slurm-local.sh start|stop [DIR]" >&2; exit 2 ;;
esac
