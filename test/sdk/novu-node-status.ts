/** The HTTP status of a @novu/node call: 200 when it resolves, else its axios error's status (-1 without a response). */
export async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { response?: { status: number } }).response?.status ?? -1;
  }
}
