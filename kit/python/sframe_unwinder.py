#!/usr/bin/env python3
"""A reference SFrame unwinder speaking the sfconform unwind protocol.

Written from docs/consumer-protocol.md and the SFrame format
specification (versions 2 and 3) alone, with the Python 3 standard
library only, so that an unwinder author can read one self-contained
program, and so that the protocol document and the harness are checked
against each other on every test run. Where the document said nothing,
what this program does is listed in kit/README.md ("What the document
had to gain").

Usage: sfconform run --consumer 'exec:python3 kit/python/sframe_unwinder.py'
"""

import bisect
import struct
import sys
import traceback

PROTOCOL = "sfconform-unwind"
PROTOCOL_VERSION = 2  # 2: a process image of several modules
NAME = "sframe_unwinder.py"
VERSION = "1"

MAGIC = 0xDEE2
MAX_FRAMES = 64
MAX_PADDING = 7  # zero bytes a linker may leave between concatenated sections

# SFrame flags.
F_FDE_SORTED = 0x1
F_FRAME_POINTER = 0x2
F_FDE_FUNC_START_PCREL = 0x4
FLAGS_MASK = {2: 0x7, 3: 0x5}

MASK64 = (1 << 64) - 1


class Arch:
    """What one target's unwinder knows and SFrame does not say."""

    def __init__(self, name, endian, abi, sp, fp, lr, caller_sp_off, sig):
        self.name = name
        self.endian = endian  # struct byte-order character
        self.abi = abi  # SFrame ABI/arch identifier
        self.sp = sp  # DWARF numbers
        self.fp = fp
        self.lr = lr  # link register, None on x86-64
        self.caller_sp_off = caller_sp_off  # caller SP = CFA + this
        self.sig = sig  # signal frame layout: (pc offset, [(dwarf reg, offset)])

    def is_aarch64(self):
        return self.abi in (1, 2)

    def is_s390x(self):
        return self.abi == 4


def _x86_sig():
    # The trampoline's SP points at the ucontext (the handler returned
    # through pretcode); uc_mcontext.gregs is 40 bytes in:
    # r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
    mc = 40
    order = [8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7]  # DWARF by gregs index
    return (mc + 16 * 8, [(r, mc + 8 * i) for i, r in enumerate(order)])


def _a64_sig():
    # SP points at rt_sigframe: siginfo (128 bytes), then the ucontext,
    # whose uc_mcontext (176 bytes in) is fault_address, regs[31], sp, pc.
    mc = 128 + 176
    regs = [(r, mc + 8 + 8 * r) for r in range(32)]  # x0-x30, then sp (31)
    return (mc + 8 + 32 * 8, regs)


def _s390x_sig():
    # SP points at rt_sigframe: 160-byte save area, sigreturn slot,
    # siginfo, and the ucontext at 296, whose uc_mcontext (40 bytes in)
    # is the PSW (mask, address), gprs[16], acrs[16] (4 bytes each), fpc
    # and pad, fprs[16]. DWARF 16-31 are f0 f2 f4 f6 f1 f3 f5 f7 f8 f10
    # f12 f14 f9 f11 f13 f15.
    mc = 296 + 40
    regs = [(r, mc + 16 + 8 * r) for r in range(16)]
    fprs = mc + 16 + 16 * 8 + 16 * 4 + 8
    for i, f in enumerate([0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15]):
        regs.append((16 + i, fprs + 8 * f))
    return (mc + 8, regs)


ARCHES = {
    "x86-64": Arch("x86-64", "<", 3, sp=7, fp=6, lr=None, caller_sp_off=0, sig=_x86_sig()),
    "aarch64": Arch("aarch64", "<", 2, sp=31, fp=29, lr=30, caller_sp_off=0, sig=_a64_sig()),
    "aarch64_be": Arch("aarch64_be", ">", 1, sp=31, fp=29, lr=30, caller_sp_off=0, sig=_a64_sig()),
    "s390x": Arch("s390x", ">", 4, sp=15, fp=11, lr=14, caller_sp_off=-160, sig=_s390x_sig()),
}

VERSIONS = (2, 3)


class FormatError(Exception):
    pass


class NoInfo(Exception):
    """No FDE or no row for the PC of the frame reached."""


class Failed(Exception):
    """Any other reason the walk stopped."""


class FDE:
    __slots__ = ("start", "end", "pcmask", "rep_size", "signal", "flex", "fres", "version",
                 "fixed_fp", "fixed_ra", "offset")


class Row:
    __slots__ = ("start", "base_sp", "mangled", "words", "umask")


# --- decoding ---------------------------------------------------------------


def _u(fmt, buf, off, what):
    try:
        return struct.unpack_from(fmt, buf, off)
    except struct.error:
        raise FormatError("%s at byte offset %d runs past the end of the section data (%d bytes)"
                          % (what, off, len(buf)))


def decode(arch, buf, addr):
    """Returns the FDEs of every section in buf (loaded at addr), sorted."""
    e = arch.endian
    fdes = []
    p = 0
    while True:
        if p >= len(buf):
            if p == 0:
                raise FormatError("empty section")
            break
        end = _decode_one(arch, buf, addr, p, fdes)
        # The next section starts right after this one, or after at most
        # MAX_PADDING zero bytes; zero bytes up to the end are padding.
        q = end
        while q < len(buf) and buf[q] == 0:
            q += 1
        if q == len(buf):
            break
        if q - end > MAX_PADDING:
            raise FormatError("%d zero bytes then more data at byte offset %d after the section ending at %d"
                              % (q - end, q, end))
        if q + 2 > len(buf) or struct.unpack_from(e + "H", buf, q)[0] != MAGIC:
            raise FormatError("byte offset %d: %s after the section ending at %d is neither zero padding nor another "
                              "section's magic" % (q, buf[q:q + 2].hex(), end))
        p = q
    fdes.sort(key=lambda f: f.start)
    return fdes


def _decode_one(arch, buf, addr, base, out):
    e = arch.endian
    (magic,) = _u(e + "H", buf, base, "header")
    if magic != MAGIC:
        swapped = ((magic & 0xFF) << 8) | (magic >> 8)
        if swapped == MAGIC:
            raise FormatError("byte offset %d: magic in the other byte order than %s's" % (base, arch.name))
        raise FormatError("byte offset %d: bad magic %#06x" % (base, magic))
    (magic, version, flags, abi, fixed_fp, fixed_ra, auxlen, num_fdes, num_fres, fre_len,
     fdeoff, freoff) = _u(e + "HBBBbbBIIIII", buf, base, "header")
    if version not in VERSIONS:
        raise FormatError("byte offset %d: SFrame version %d (this unwinder reads 2 and 3)" % (base + 2, version))
    if flags & ~FLAGS_MASK[version]:
        raise FormatError("byte offset %d: unknown flag bits %#x" % (base + 3, flags))
    if fdeoff > freoff:
        raise FormatError("byte offset %d: the FDE table (fdeoff %d) starts after the FREs (freoff %d)"
                          % (base + 20, fdeoff, freoff))
    if abi != arch.abi:
        raise FormatError("byte offset %d: ABI %d is not %s's (%d)" % (base + 4, abi, arch.name, arch.abi))
    hdr_end = base + 28 + auxlen
    fde_base = hdr_end + fdeoff
    fre_base = hdr_end + freoff
    end = fre_base + fre_len
    if end > len(buf):
        raise FormatError("byte offset %d: the section's FRE data (%d bytes at %d) runs past the end (%d bytes)"
                          % (base, fre_len, fre_base, len(buf)))
    pcrel = bool(flags & F_FDE_FUNC_START_PCREL)
    fde_size = 20 if version == 2 else 16
    for i in range(num_fdes):
        off = fde_base + i * fde_size
        if off + fde_size > fre_base:
            raise FormatError("byte offset %d: FDE %d overlaps the FRE sub-section at %d" % (off, i, fre_base))
        f = FDE()
        f.version, f.fixed_fp, f.fixed_ra, f.offset = version, fixed_fp, fixed_ra, off
        if version == 2:
            start, size, fre_off, nfres, info, rep = _u(e + "iIIIBB", buf, off, "FDE %d" % i)
            info2 = 0
            attr_end = fre_base + fre_off
        else:
            start, size, fre_off = _u(e + "qII", buf, off, "FDE %d" % i)
            aoff = fre_base + fre_off
            if aoff + 5 > end:
                raise FormatError("byte offset %d: FDE %d's attributes at %d lie outside the FRE sub-section"
                                  % (off, i, aoff))
            nfres, info, info2, rep = _u(e + "HBBB", buf, aoff, "FDE %d's attributes" % i)
            attr_end = aoff + 5
        f.start = ((addr + off if pcrel else addr + base) + start) & MASK64
        f.end = f.start + size
        f.pcmask = bool(info & 0x10)
        f.rep_size = rep
        f.signal = version == 3 and bool(info & 0x80)
        ftype = info2 & 0x1F
        if ftype > 1:
            raise FormatError("byte offset %d: FDE %d has unknown type %d" % (off + 3, i, ftype))
        f.flex = ftype == 1
        fre_type = info & 0xF
        if fre_type > 2:
            raise FormatError("byte offset %d: FDE %d has FRE type %d" % (off, i, fre_type))
        f.fres = _decode_fres(arch, buf, attr_end, end, nfres, fre_type, i)
        out.append(f)
    return end


def _decode_fres(arch, buf, p, end, n, fre_type, fde):
    e = arch.endian
    sfmt = {0: "B", 1: "H", 2: "I"}[fre_type]
    ssize = 1 << fre_type
    rows = []
    for j in range(n):
        what = "FDE %d's FRE %d" % (fde, j)
        if p + ssize + 1 > end:
            raise FormatError("byte offset %d: %s runs past the FRE sub-section's end %d" % (p, what, end))
        (start,) = _u(e + sfmt, buf, p, what)
        info = buf[p + ssize]
        count = (info >> 1) & 0xF
        code = (info >> 5) & 3
        if code == 3:
            raise FormatError("byte offset %d: %s has data word size code 3" % (p + ssize, what))
        wsize = 1 << code
        wfmt = {1: "b", 2: "h", 4: "i"}[wsize]
        q = p + ssize + 1
        if q + count * wsize > end:
            raise FormatError("byte offset %d: %s's data words run past the FRE sub-section's end %d" % (p, what, end))
        r = Row()
        r.start = start
        r.base_sp = bool(info & 1)
        r.mangled = bool(info & 0x80)
        r.umask = (1 << (8 * wsize)) - 1  # flex control words are unsigned
        r.words = list(_u(e + wfmt * count, buf, q, what)) if count else []
        rows.append(r)
        p = q + count * wsize
    return rows


# --- lookup -----------------------------------------------------------------


class Table:
    def __init__(self, arch, fdes):
        self.arch = arch
        self.fdes = fdes
        self.starts = [f.start for f in fdes]

    def fde(self, pc):
        i = bisect.bisect_right(self.starts, pc) - 1
        if i >= 0 and pc < self.fdes[i].end:
            return self.fdes[i]
        return None


class Modules:
    """A process image's loaded objects (protocol version 2), each with its
    code range and its own table: a PC is looked up in the table of the
    module whose range holds it, and a PC in none has no FDE."""

    def __init__(self, mods):
        self.mods = sorted(mods, key=lambda m: m[0])  # (start, end, table)
        self.starts = [m[0] for m in self.mods]

    def fde(self, pc):
        i = bisect.bisect_right(self.starts, pc) - 1
        if i >= 0 and pc < self.mods[i][1]:
            return self.mods[i][2].fde(pc)
        return None


def find_row(fde, pc):
    off = pc - fde.start
    if fde.pcmask:
        if fde.rep_size == 0:
            raise Failed("FDE at byte offset %d: PCMASK with repetition size 0" % fde.offset)
        off %= fde.rep_size
    row = None
    for r in fde.fres:
        if r.start > off:
            break
        row = r
    return row


# --- unwinding --------------------------------------------------------------


class Frame:
    __slots__ = ("pc", "sp", "fp", "cfa", "flags")

    def __init__(self, pc, sp, fp, cfa=0, flags=()):
        self.pc, self.sp, self.fp, self.cfa, self.flags = pc, sp, fp, cfa, list(flags)

    def line(self):
        s = "frame pc=%x sp=%x fp=%x cfa=%x" % (self.pc, self.sp, self.fp, self.cfa & MASK64)
        if self.flags:
            s += " " + " ".join(self.flags)
        return s


class Memory:
    def __init__(self, arch, addr, data):
        self.addr, self.data = addr, data
        self.fmt = arch.endian + "Q"

    def word(self, a):
        a &= MASK64
        o = a - self.addr
        if o < 0 or o + 8 > len(self.data):
            raise Failed("address %#x is outside the stack copy [%#x, %#x)" % (a, self.addr, self.addr + len(self.data)))
        return struct.unpack_from(self.fmt, self.data, o)[0]


class Walk:
    """One backtrace: state of the frame being unwound."""

    def __init__(self, arch, table, regs, mem):
        self.arch, self.table, self.mem = arch, table, mem
        self.regs = regs  # the register file; valid while self.exact
        self.exact = True  # frame 0, or a frame a signal interrupted

    def reg(self, n, sp, fp):
        # SP and FP are known in every frame; any other register only in
        # a frame whose whole register file is known.
        if n == self.arch.sp:
            return sp
        if n == self.arch.fp:
            return fp
        if not self.exact:
            raise Failed("rule names register %d, known in the topmost (or interrupted) frame only" % n)
        if n not in self.regs:
            raise Failed("rule names register %d, which the step did not send" % n)
        return self.regs[n]

    def backtrace(self, pc):
        a = self.arch
        if a.sp not in self.regs:
            return [], Failed("the step sent no stack pointer (DWARF %d)" % a.sp)
        sp = self.regs[a.sp]
        fp = self.regs.get(a.fp, 0)
        frames = []
        while True:
            if len(frames) >= MAX_FRAMES:
                return frames, Failed("more than %d frames" % MAX_FRAMES)
            try:
                done, nxt = self.step(frames, pc, sp, fp)
            except (NoInfo, Failed) as err:
                frames.append(Frame(pc, sp, fp, 0, ["partial"]))
                return frames, err
            if done:
                return frames, None
            pc, sp, fp = nxt

    def step(self, frames, pc, sp, fp):
        """Unwinds the frame at pc; appends it to frames. Returns (outermost?, caller)."""
        a = self.arch
        # A caller's PC is a return address: look its row up at RA - 1,
        # inside the call (a call to a noreturn function may be the last
        # instruction of its function).
        look = pc if self.exact else pc - 1
        fde = self.table.fde(look)
        if fde is None:
            raise NoInfo("no FDE covers pc %#x" % look)
        if fde.signal:
            return False, self.signal(frames, pc, sp, fp)
        if not fde.fres:
            if fde.version == 3 and not fde.flex:
                # SFrame v3: a DEFAULT FDE without FREs marks the outermost frame.
                frames.append(Frame(pc, sp, fp, 0, ["outermost"]))
                return True, None
            raise NoInfo("the FDE at byte offset %d has no FREs" % fde.offset)
        row = find_row(fde, look)
        if row is None:
            raise NoInfo("no FRE of the FDE at byte offset %d covers pc %#x" % (fde.offset, look))
        if not row.words:
            # Data-word count 0: the return address is undefined.
            frames.append(Frame(pc, sp, fp, 0, ["outermost"]))
            return True, None
        if fde.flex:
            cfa, ra, nfp = self.flex_rules(fde, row, sp, fp)
        else:
            cfa, ra, nfp = self.default_rules(fde, row, sp, fp)
        caller_sp = (cfa + a.caller_sp_off) & MASK64
        if caller_sp < sp or (caller_sp == sp and not self.exact):
            raise Failed("caller SP %#x (CFA %#x) is not above SP %#x" % (caller_sp, cfa, sp))
        # RA
        if ra is None:
            if a.lr is None:
                raise Failed("no return address rule")
            if not self.exact:
                raise Failed("the return address is in the link register (DWARF %d), known in the topmost frame only"
                             % a.lr)
            ra_v = self.regs.get(a.lr)
            if ra_v is None:
                raise Failed("the step sent no link register (DWARF %d)" % a.lr)
        else:
            ra_v = ra()
        if row.mangled and a.is_aarch64():
            ra_v &= (1 << 48) - 1  # strip the pointer authentication code
        fp_v = fp if nfp is None else nfp()
        frames.append(Frame(pc, sp, fp, cfa))
        self.exact = False
        self.regs = {}
        return False, (ra_v, caller_sp, fp_v)

    def signal(self, frames, pc, sp, fp):
        # A signal trampoline: its caller is the interrupted context, read
        # whole from the signal frame at the trampoline's SP.
        a = self.arch
        pc_off, slots = a.sig
        ipc = self.mem.word(sp + pc_off)
        regs = {}
        for r, off in slots:
            regs[r] = self.mem.word(sp + off)
        frames.append(Frame(pc, sp, fp, sp, ["signal"]))
        self.regs = regs
        self.exact = True
        return ipc, regs[a.sp], regs.get(a.fp, 0)

    def deref(self, addr):
        return self.mem.word(addr)

    def default_rules(self, fde, row, sp, fp):
        a = self.arch
        w = row.words
        cfa_off = w[0]
        if a.is_s390x():
            cfa_off = cfa_off * 8 + 160
        base = sp if row.base_sp else fp
        cfa = (base + cfa_off) & MASK64
        i = 1

        def at_cfa(off):
            return lambda: self.deref(cfa + off)

        def v2_s390x(word):
            # Version 2, s390x: an odd word is a DWARF register number.
            if fde.version == 2 and a.is_s390x() and word & 1:
                r = word >> 1
                return lambda: self.reg(r, sp, fp)
            return at_cfa(word)

        ra = None
        if fde.fixed_ra != 0:
            ra = at_cfa(fde.fixed_ra)
        elif i < len(w):
            if w[i] != 0:  # 0: RA not saved (still in the link register)
                ra = v2_s390x(w[i])
            i += 1
        nfp = None
        if fde.fixed_fp != 0:
            nfp = at_cfa(fde.fixed_fp)
        elif i < len(w):
            if w[i] != 0:
                nfp = v2_s390x(w[i])
            i += 1
        if i < len(w):
            raise Failed("FRE of the FDE at byte offset %d has %d data words, %d used" % (fde.offset, len(w), i))
        return cfa, ra, nfp

    def flex_rules(self, fde, row, sp, fp):
        a = self.arch
        raw = row.words
        if len(raw) < 2:
            raise Failed("flexible FRE of the FDE at byte offset %d has fewer than 2 data words" % fde.offset)
        um = row.umask
        ctl = raw[0] & um
        disp = raw[1]
        if not ctl & 1:
            raise Failed("flexible FDE at byte offset %d: CFA control word without a register" % fde.offset)
        if a.is_s390x():
            disp = disp * 8 + 160
        base = self.reg(ctl >> 3, sp, fp)
        cfa = (base + disp) & MASK64
        if ctl & 2:
            cfa = self.deref(cfa)

        def rule(c, d):
            c &= um

            def value():
                b = self.reg(c >> 3, sp, fp) if c & 1 else cfa
                v = (b + d) & MASK64
                return self.deref(v) if c & 2 else v
            return value

        i = 2
        rules = []
        for fixed in (fde.fixed_ra, fde.fixed_fp):
            r = None
            if i < len(raw) and raw[i] != 0:
                if i + 1 >= len(raw):
                    raise Failed("flexible FRE of the FDE at byte offset %d: control word without displacement"
                                 % fde.offset)
                r = rule(raw[i], raw[i + 1])
                i += 2
            else:
                if i < len(raw):
                    i += 1  # a lone 0 control word: not tracked
                if fixed != 0:
                    r = (lambda off: (lambda: self.deref(cfa + off)))(fixed)
            rules.append(r)
        if i < len(raw):
            raise Failed("flexible FRE of the FDE at byte offset %d has %d data words, %d used"
                         % (fde.offset, len(raw), i))
        return cfa, rules[0], rules[1]


# --- protocol ---------------------------------------------------------------


class Consumer:
    def __init__(self, out):
        self.out = out
        self.arch = None
        self.table = None

    def supports(self, target, version):
        if target not in ARCHES:
            return "no unknown target " + target
        if version not in VERSIONS:
            return "no this unwinder reads SFrame versions 2 and 3"
        return "yes"

    def load(self, target, addr, data):
        arch = ARCHES.get(target)
        self.arch, self.table = arch, None
        if arch is None:
            return "refused unknown target " + target
        try:
            self.table = Table(arch, decode(arch, data, addr))
        except FormatError as err:
            return "refused %s" % err
        return "ok"

    def load_modules(self, target, lines):
        """lines: the "module NAME START END ADDR HEXBYTES" lines."""
        arch = ARCHES.get(target)
        self.arch, self.table = arch, None
        if arch is None:
            return "refused unknown target " + target
        mods = []
        for line in lines:
            f = line.split(" ")
            name, start, end, addr = f[1], int(f[2], 16), int(f[3], 16), int(f[4], 16)
            try:
                mods.append((start, end, Table(arch, decode(arch, bytes.fromhex(f[5]), addr))))
            except FormatError as err:
                return "refused module %s: %s" % (name, err)
        self.table = Modules(mods)
        return "ok"

    def unwind(self, line):
        f = line.split(" ")
        index = int(f[1])  # decimal
        pc = None
        regs = {}
        mem = (0, b"")  # no copy: no memory is readable
        for kv in f[2:]:
            k, _, v = kv.partition("=")
            if k == "pc":
                pc = int(v, 16)
            elif k == "stack":
                sa, _, hexbytes = v.partition(":")
                mem = (int(sa, 16), bytes.fromhex(hexbytes))
            else:
                regs[int(k)] = int(v, 16)  # DWARF number in decimal, value in hex
        if self.table is None:
            return "result %d 0 failed no section loaded\n" % index
        walk = Walk(self.arch, self.table, regs, Memory(self.arch, *mem))
        try:
            frames, err = walk.backtrace(pc)
        except Exception as exc:  # a bug of this program: say so for this step only
            traceback.print_exc(file=sys.stderr)
            frames, err = [], Failed("internal error: %r" % exc)
        head = "result %d %d" % (index, len(frames))
        if err is not None:
            kind = "noinfo" if isinstance(err, NoInfo) else "failed"
            head += " %s %s" % (kind, str(err).replace("\n", " "))
        return head + "\n" + "".join(fr.line() + "\n" for fr in frames)


def main():
    inp = sys.stdin.buffer
    out = sys.stdout
    c = Consumer(out)

    def readline():
        b = inp.readline()
        if not b:
            return None
        return b.decode("ascii").rstrip("\n")

    line = readline()
    if line is None:
        return 1
    f = line.split(" ")
    if len(f) < 3 or f[0] != "hello" or f[1] != PROTOCOL or int(f[2]) < 1:
        out.write("refused this unwinder speaks %s %d\n" % (PROTOCOL, PROTOCOL_VERSION))
        out.flush()
        return 1
    # The highest version both speak; version 2 adds "modules".
    version = min(int(f[2]), PROTOCOL_VERSION)
    out.write("hello %s %d %s %s\n" % (PROTOCOL, version, NAME, VERSION))
    out.flush()
    while True:
        line = readline()
        if line is None or line == "quit":
            return 0
        f = line.split(" ")
        cmd = f[0]
        if cmd == "supports":
            out.write(c.supports(f[1], int(f[2])) + "\n")
        elif cmd == "load":
            out.write(c.load(f[1], int(f[2], 16), bytes.fromhex(f[3]) if len(f) > 3 else b"") + "\n")
        elif cmd == "modules" and version >= 2:
            n = int(f[2])  # decimal
            out.write(c.load_modules(f[1], [readline() for _ in range(n)]) + "\n")
        elif cmd == "unwind":
            n = int(f[1])  # decimal
            steps = [readline() for _ in range(n)]
            out.write("".join(c.unwind(s) for s in steps))
        else:
            sys.stderr.write("%s: unknown request %r\n" % (NAME, line[:80]))
            return 1
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
