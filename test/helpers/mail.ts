// A real SMTP server for tests (smtp-server, nodemailer's own), on loopback: what growthdesk
// sends arrives here over SMTP and is parsed (mailparser), so a test reads the message a person
// would get: its sender, recipient, subject and the link in its text.
import { SMTPServer } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'

export interface Mailbox {
  /** SMTP_URL of this server, with the user and password it takes. */
  url: string
  /** Every message received so far, in order. */
  messages: ParsedMail[]
  /** The next message to arrive (or the first one not yet taken by next()). */
  next(timeoutMs?: number): Promise<ParsedMail>
  /** The first http(s) link in a message's text. */
  linkIn(message: ParsedMail): string
  /** Refuse recipients matching this from now on (a mail server that says no). */
  refuse(pattern: RegExp | null): void
  close(): Promise<void>
}

export async function startMailServer(): Promise<Mailbox> {
  const messages: ParsedMail[] = []
  let taken = 0
  const waiting: (() => void)[] = []
  let refused: RegExp | null = null
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'growthdesk' && auth.password === 'mail-secret') return callback(null, { user: auth.username })
      return callback(new Error('Invalid username or password'))
    },
    onRcptTo(address, _session, callback) {
      if (refused?.test(address.address)) return callback(new Error(`Mailbox ${address.address} unavailable`))
      callback()
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then((mail) => {
        messages.push(mail)
        for (const wake of waiting.splice(0)) wake()
        callback()
      }, callback)
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as { port: number }
  return {
    url: `smtp://growthdesk:mail-secret@127.0.0.1:${port}`,
    messages,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (messages.length <= taken) {
        if (Date.now() > deadline) throw new Error(`no mail arrived in ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          setTimeout(resolve, 100)
        })
      }
      return messages[taken++]!
    },
    linkIn(message) {
      const match = /https?:\/\/\S+/.exec(message.text ?? '')
      if (!match) throw new Error(`no link in the mail: ${message.text}`)
      return match[0]
    },
    refuse(pattern) {
      refused = pattern
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
