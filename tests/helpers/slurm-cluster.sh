#!/usr/bin/env bash
# slurm-cluster.sh - a private single-node Slurm cluster for the tests
# (Debian 12's slurmctld/slurmd 22.05, no systemd, no munged):
#   slurm-cluster.sh start DIR   write DIR/etc/slurm.conf (+ gres.conf), start
#                                slurmctld and slurmd, wait until the node is idle
#   slurm-cluster.sh stop DIR    cancel every job, stop both daemons by PID
#   slurm-cluster.sh why-not     print why this machine cannot run one (exit 1), or nothing
# Everything lives under DIR (config, state, spool, logs, pid files, the
# job-completion file DIR/log/jobcomp.txt): localhost only, ports picked free
# at start, a cluster name of its own, so two test suites never collide.
# auth/none (the loopback cluster trusts its own clients), proctrack/linuxproc,
# task/none (no cgroups), two fake GPUs as gres backed by character devices
# of type h200 (mknod c 1 3, clones of /dev/null). Clients: export SLURM_CONF=DIR/etc/slurm.conf.
# Facts behind each setting: ../shared/notes/slurm-and-browser.md.
set -u
cmd=${1:-}
D=${2:-}

why_not() {
  [ "$(id -u)" -eq 0 ] || { echo "not root (slurmd and mknod need root)"; return 1; }
  for b in slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v $b >/dev/null 2>&1 || { echo "$b not installed (scripts/install-deps.sh --test installs slurmctld slurmd slurm-client)"; return 1; }
  done
  [ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/auth_none.so ] || [ -n "$(find /usr/lib -name auth_none.so 2>/dev/null | head -1)" ] ||
    { echo "this Slurm has no auth/none plugin"; return 1; }
  return 0
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds (a bound, not a delay)
wait_for() { local n=$(($1 * 10)); shift; until "$@" >/dev/null 2>&1; do n=$((n - 1)); [ $n -gt 0 ] || return 1; sleep 0.1; done; }

start() {
  mkdir -p "$D"/{etc,state,spool,log,run,dev} || return 1
  mknod "$D/dev/fakegpu0" c 1 3 && mknod "$D/dev/fakegpu1" c 1 3 || return 1
  local p1 p2 cpus name
  p1=$(free_port); p2=$(free_port)
  while [ "$p2" = "$p1" ]; do p2=$(free_port); done
  cpus=$(nproc); [ "$cpus" -gt 4 ] && cpus=4
  name="vf$(basename "$D" | tr -cd 'a-z0-9' | tail -c 8)"
  cat > "$D/etc/slurm.conf" <<CONF
# private test cluster (tests/helpers/slurm-cluster.sh)
ClusterName=$name
SlurmctldHost=localhost
SlurmctldPort=$p1
SlurmdPort=$p2
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=3600
GresTypes=gpu
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 Gres=gpu:h200:2 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES MaxTime=INFINITE State=UP
CONF
  cat > "$D/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=node1 Name=gpu Type=h200 File=$D/dev/fakegpu[0-1]
CONF
  export SLURM_CONF=$D/etc/slurm.conf
  slurmctld -f "$SLURM_CONF" || return 1
  wait_for 60 sh -c 'scontrol ping | grep -q UP' || { echo "slurmctld did not answer (log: $D/log/slurmctld.log)" >&2; return 1; }
  slurmd -N node1 -f "$SLURM_CONF" || return 1
  wait_for 120 sh -c 'sinfo -h -n node1 -o %T | grep -qxE "idle|mixed|allocated"' ||
    { echo "node1 not ready (log: $D/log/slurmd.log)" >&2; return 1; }
}

stop_pid() {
  local pf=$1 p
  [ -f "$pf" ] || return 0
  p=$(cat "$pf")
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 0
  kill -TERM "$p"
  wait_for 30 sh -c "! kill -0 $p" || kill -KILL "$p" 2>/dev/null
}

stop() {
  export SLURM_CONF=$D/etc/slurm.conf
  if [ -f "$SLURM_CONF" ] && scontrol ping 2>/dev/null | grep -q UP; then
    scancel --full $(squeue -h -o %A 2>/dev/null | sort -u) 2>/dev/null
    wait_for 60 sh -c '[ -z "$(squeue -h 2>/dev/null)" ]'
  fi
  stop_pid "$D/run/slurmd.pid"
  stop_pid "$D/run/slurmctld.pid"
}

case "$cmd" in
  start) [ -n "$D" ] || { echo "usage: $0 start DIR" >&2; exit 2; }; start ;;
  stop) [ -n "$D" ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop ;;
  why-not) why_not ;;
  *) echo "usage: $0 start DIR | stop DIR | why-not" >&2; exit 2 ;;
esac
