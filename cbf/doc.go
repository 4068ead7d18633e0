// Package cbf reads and writes backtraces in the Compact Backtrace Format
// (CBF), version 0, the form in which sfconform's reproducers store the
// expected and the unwound backtrace of a failure.
//
// The format is specified in "Compact Backtrace Format" of the Swift
// project (docs/CompactBacktraceFormat.md,
// https://github.com/swiftlang/swift/blob/main/docs/CompactBacktraceFormat.md).
// Where that document is silent this package follows Swift's
// implementation (stdlib/public/RuntimeModule/CompactBacktrace.swift): the
// info byte is version<<2 | size, address and count bytes are big-endian,
// an address value is sign-extended from its first byte and a relative
// address wraps at the word size.
//
// A Backtrace holds what a stream can say: the word size, the frames (pc,
// ra or async, each with its address), the omitted-frame runs between them
// and whether the capture was truncated.
//
// # Decisions
//
// Encoding:
//
//   - Each address takes the shorter of its absolute and its relative form;
//     a tie goes to relative, as in Swift's encoder. The previous address
//     starts at 0.
//   - The first address is written absolute, as the document requires. (Swift's
//     encoder writes it relative to 0 when the lengths tie; the length is the
//     same either way, only the a bit differs.)
//   - An omitted run of up to 32 frames is written inline, as the 5-bit
//     field holding count-1 allows; a longer one as 0x60|(k-1) followed by
//     the count in k big-endian bytes, k as small as possible. (Swift's
//     encoder inlines only up to 31, one byte more for a run of 32.)
//     Together with the address rule this makes every stream Encode writes
//     the shortest the document allows (TestEncodeIsShortest).
//   - "end" is always written, or "trunc" when Backtrace.Truncated is set.
//   - "rep" (0x80-0x8f) is never written. The document lists these opcodes as
//     reserved, and a reader that follows it would reject them; a repeated
//     frame costs two bytes as a relative address of 0, and repeated frames
//     are rare outside recursion, which omitted runs already cover.
//
// Decoding:
//
//   - "rep", which Swift's implementation defines, is read, so that streams
//     from Swift's encoder decode: 0x80|(n-1) repeats the previous entry n
//     times in all, 0x88|(k-1) takes the count from the next k big-endian
//     bytes. The previous entry may be a frame or an omitted run; repeating
//     a frame leaves the previous address unchanged. A "rep" with no entry
//     before it, or with a count of 0, is an error.
//   - A first address in relative form counts from 0, as in Swift's
//     decoder, since Swift's encoder writes such streams.
//   - Address values longer than the word (a 3-byte value in a 16-bit
//     backtrace) are ErrAddressOverflow, and omit counts longer than the word
//     ErrCountOverflow, rather than being cut to the word as Swift's decoder
//     does; an omit count of 0 is ErrZeroCount. Values shorter than needed
//     or padded with redundant bytes are accepted.
//   - Data that stops at an instruction boundary without "end" reads as
//     ended, not truncated: the document lets a writer leave out "end"
//     when the length is known. (Swift's decoder reports a truncated
//     backtrace there.)
//   - Decode rejects bytes after "end"/"trunc"; DecodePrefix stops there
//     and reports how much it read.
//
// # Security
//
// Decode accepts untrusted input. It reads the buffer once, front to back,
// with every read bounds-checked. Because "rep" lets a few bytes ask for up
// to 2^64 frames, a backtrace is limited to MaxEntries frames plus omitted
// runs (ErrTooLarge), which bounds its memory to a few MiB. Malformed input
// yields a *FormatError carrying the byte offset of the instruction (or of
// the info byte) at fault and wrapping one of the Err* sentinels.
package cbf
