package bench

// WriterQuantum exposes writerQuantum to the external tests.
const WriterQuantum = writerQuantum
