/** While the database stays away, one warning in this many failures (the first few all show). */
const LOG_EVERY_NTH_FAILURE = 6;

/** Whether the `failures`-th failure in a row is worth a log line. */
export function shouldLog(failures: number): boolean {
  return failures <= LOG_EVERY_NTH_FAILURE || failures % LOG_EVERY_NTH_FAILURE === 0;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
