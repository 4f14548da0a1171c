// The Node.js check that start.js, bin/growthdesk.js and bin/prepare.js make before reading any
// TypeScript. An older Node stops at the first `.ts` import with ERR_UNKNOWN_FILE_EXTENSION and a
// stack trace; this says it in one line instead. The range is package.json's `engines`: 22.18 or
// newer within 22 (type stripping on by default from 22.18.0), and 24 or newer; 23 is not an LTS
// line and is refused. Plain JavaScript with nothing newer than Node 12's syntax, so that an old
// Node reads this file to the end; the entry files import it first and the TypeScript only after
// the check, by a dynamic import (a static one would be loaded before the check runs).

export const supportedNodeRange = '^22.18.0 || >=24.0.0'

// `version` as in process.versions.node ('20.20.2'; a leading 'v' and a '-pre' suffix are read too).
export function isSupportedNode(version) {
  const parts = String(version).replace(/^v/, '').split('.')
  const major = parseInt(parts[0], 10)
  const minor = parseInt(parts[1], 10)
  if (major === 22) return minor >= 18
  return major >= 24
}

export function nodeVersionLine(version) {
  return 'growthdesk needs Node.js 22.18+ or 24+ (not 23); this is ' + version + '.'
}

// True on a supported Node; otherwise writes the one line to stderr and returns false. The caller
// decides the exit code (the install step still succeeds); a process.exit() right after loses
// nothing, stderr being written synchronously to files, pipes and POSIX terminals.
export function nodeVersionSupported() {
  const version = process.versions.node
  if (isSupportedNode(version)) return true
  process.stderr.write(nodeVersionLine(version) + '\n')
  return false
}
