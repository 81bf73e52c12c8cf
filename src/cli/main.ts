// What every command-line script shares: its failure is one line on stderr and exit status 1, never a stack.
export async function main(name: string, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (error) {
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
