#!/bin/sh
# Report what a GPU machine offers cut: driver, devices, libcuda exports, kernel tracing features.
# Usage: gpu-env.sh [outdir]   (writes libcuda_exports.txt there)
out=${1:-.}
sec() { printf '\n== %s\n' "$*"; }
sec uname; uname -a
sec os; head -2 /etc/os-release
sec driver; cat /proc/driver/nvidia/version 2>&1; cat /sys/module/nvidia/version 2>&1
sec devices; grep -iE 'nvidia' /proc/devices; ls -la /dev/nvidia* 2>&1
sec gpus; nvidia-smi -L 2>&1
sec python; python3 -c 'import sys,torch;print(sys.version.split()[0],torch.__version__,torch.version.cuda)' 2>&1
sec libc; ldd --version 2>&1 | head -1
sec cuda.h; grep -m1 'define CUDA_VERSION' /usr/local/cuda/include/cuda.h 2>&1
sec ldconfig; ldconfig -p | grep -E 'libcuda\.|libcudart|libcupti|libnvidia-ml'
sec tools; for t in gcc cc clang nvcc make python3 perf strace gdb bpftool; do printf '%s: %s\n' $t "$(command -v $t)"; done
sec kconfig
cfg=/boot/config-$(uname -r)
if [ -r "$cfg" ]; then cat "$cfg"; elif [ -r /proc/config.gz ]; then zcat /proc/config.gz; fi |
	grep -E 'CONFIG_(KPROBES|UPROBES|UPROBE_EVENTS|KPROBE_EVENTS|BPF_EVENTS|FPROBE|FUNCTION_TRACER|DYNAMIC_FTRACE|DEBUG_INFO_BTF|DEBUG_INFO_BTF_MODULES|BPF_JIT|BPF_SYSCALL)='
sec mounts; mount | grep -E 'tracefs|debugfs|bpf' ; ls /sys/kernel/tracing 2>&1 | head -3
sec perf; cat /proc/sys/kernel/perf_event_paranoid; ls /sys/bus/event_source/devices/
sec btf; ls /sys/kernel/btf | grep -E 'vmlinux|nvidia'
sec interrupts; grep -iE 'nvidia|CPU0' /proc/interrupts | cut -c1-160
sec libcuda exports
lib=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
echo "libcuda: $lib -> $(readlink -f "$lib")"
python3 - "$lib" "$out/libcuda_exports.txt" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
dynsym = [s for s in secs if s[1] == 11][0]
strtab = secs[dynsym[6]]
names = []
for off in range(dynsym[4], dynsym[4] + dynsym[5], 24):
    name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', data, off)
    if (info & 0xf) == 2 and shndx != 0:
        s = data[strtab[4] + name: data.index(b'\0', strtab[4] + name)].decode()
        names.append(s)
names = sorted(set(names))
open(sys.argv[2], 'w').write('\n'.join(names) + '\n')
cu = [n for n in names if n.startswith('cu')]
print(len(names), 'function exports,', len(cu), 'cu*')
PY
