/**
 * A reason the process must not start that the operator has to fix (a key that does not match the
 * database, say). main.ts prints its message as one line and exits 1, without a stack trace.
 */
export class StartupRefusal extends Error {
  override readonly name: string = 'StartupRefusal';
}
