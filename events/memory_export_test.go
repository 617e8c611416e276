package events

// MemoryMessage is the message stored at seq in an in-memory store (from
// [OpenMemory]): its subject, message id and body; ok is false when s is
// not one or holds no message at seq. For the conformance suite, which
// checks what a store holds beneath its interface.
func MemoryMessage(s Store, seq uint64) (subject, msgID string, data []byte, ok bool) {
	m, isMem := s.(*memStore)
	if !isMem {
		return "", "", nil, false
	}
	msgs, _ := m.snapshot()
	if seq < 1 || seq > uint64(len(msgs)) {
		return "", "", nil, false
	}
	msg := msgs[seq-1]
	return msg.subject, msg.msgID, msg.data, true
}
