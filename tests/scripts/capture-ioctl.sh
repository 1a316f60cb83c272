#!/bin/sh
# cutcapture, ioctl and irq layers without a GPU: --ioctl-dev/--uvm-dev make /dev/zero and
# /dev/full stand for /dev/nvidiactl and /dev/nvidia-uvm, and tests/fixtures/capture-ioctl.c
# makes NVIDIA-shaped requests on them: names, _IOC fields, control, class, XFER inner
# command and status must come out as that file documents; a tty ioctl on /dev/null must not.
# Interrupts: --irq-prefix virtio with direct disk writes, checked when any arrive.
# Needs root with BPF; exits 77 when that is missing.
. "$(dirname "$0")/lib/capture-setup.sh"
need_bpf

"$cap" -q -l ioctl --ioctl-dev /dev/zero --uvm-dev /dev/full -o "$t/io.jsonl" -- \
	"$fx/capture-ioctl" /dev/zero /dev/full >/dev/null 2>"$t/err" || fail "exit $?: $(cat "$t/err")"
cutstat "$t/io.jsonl" >/dev/null || fail "cutstat"
got=$(jq -c 'select(.layer=="ioctl") | [.name, .ret, .args]' "$t/io.jsonl" |
	sed 's/"ptr":"0x[0-9a-f]*"/"ptr":P/')
want='["open",3,{"fd":3,"dev":"zero","path":"/dev/zero"}]
["open",4,{"fd":4,"dev":"full","path":"/dev/full"}]
["NV_ESC_RM_CONTROL",-25,{"fd":3,"dev":"zero","cmd":"0xc020462a","dir":"rw","type":70,"nr":42,"size":32,"ctrl":"0x20800a4c","status":31}]
["NV_ESC_RM_ALLOC",-25,{"fd":3,"dev":"zero","cmd":"0xc030462b","dir":"rw","type":70,"nr":43,"size":48,"class":"0x2080","status":34}]
["NV_ESC_IOCTL_XFER_CMD",-25,{"fd":3,"dev":"zero","cmd":"0xc01046d3","dir":"rw","type":70,"nr":211,"size":16,"ctrl":"0x20800a4c","xfer":"0x2a","status":31}]
["NV_ESC_RM_FREE",-25,{"fd":3,"dev":"zero","cmd":"0xc0104629","dir":"rw","type":70,"nr":41,"size":16,"status":35}]
["mmap",0,{"fd":3,"dev":"zero","bytes":8192,"ptr":P,"offset":"0x0"}]
["munmap",0,{"dev":"zero","bytes":8192,"ptr":P}]
["UVM_INITIALIZE",-25,{"fd":4,"dev":"full","cmd":"0x30000001"}]
["UVM_REGISTER_GPU",-25,{"fd":4,"dev":"full","cmd":"0x25"}]
["close",0,{"fd":3,"dev":"zero"}]
["close",0,{"fd":4,"dev":"full"}]'
[ "$got" = "$want" ] || fail "ioctl events differ:
$(printf '%s\n' "$want" >"$t/want"; printf '%s\n' "$got" | diff "$t/want" -)"
# The mapping and the unmapping are of the same address.
[ "$(jq -r 'select(.name=="mmap" or .name=="munmap") | .args.ptr' "$t/io.jsonl" | sort -u | wc -l)" = 1 ] ||
	fail "munmap of another address than mmap"

# Interrupts: attributed to no process, named by their handler.
"$cap" -q -l irq --irq-prefix virtio -o "$t/irq.jsonl" -- sh -c \
	"dd if=/dev/zero of='$B/capture-irq.tmp' bs=64k count=64 oflag=direct 2>/dev/null; rm -f '$B/capture-irq.tmp'" ||
	fail "irq capture: exit $?"
cutstat "$t/irq.jsonl" >/dev/null || fail "irq: cutstat"
if [ "$(jq -r 'select(.layer=="irq")' "$t/irq.jsonl" | jq -s length)" -gt 0 ]; then
	jq -e -s 'all(.[] | select(.layer=="irq"); .pid == 0 and .tid == 0 and
		(.name | startswith("virtio")) and (.args.irq | type) == "number" and .dur >= 0)' \
		"$t/irq.jsonl" >/dev/null || fail "irq events malformed"
else
	echo "note: no virtio interrupt seen; irq events not checked"
fi
exit 0
