//! Names of OTF2 event record types, spelled as `otf2-print` prints them, so
//! that the counts of skipped records can be compared with its output.

/// Event record type ids this reader decodes.
pub mod ev {
    pub const ENTER: u8 = 12;
    pub const LEAVE: u8 = 13;
    pub const MPI_SEND: u8 = 14;
    pub const MPI_ISEND: u8 = 15;
    pub const MPI_ISEND_COMPLETE: u8 = 16;
    pub const MPI_IRECV_REQUEST: u8 = 17;
    pub const MPI_RECV: u8 = 18;
    pub const MPI_IRECV: u8 = 19;
    pub const MPI_REQUEST_TEST: u8 = 20;
    pub const MPI_REQUEST_CANCELLED: u8 = 21;
    pub const MPI_COLLECTIVE_BEGIN: u8 = 22;
    pub const MPI_COLLECTIVE_END: u8 = 23;
    pub const OMP_FORK: u8 = 24;
    pub const OMP_TASK_CREATE: u8 = 28;
    pub const OMP_TASK_SWITCH: u8 = 29;
    pub const OMP_TASK_COMPLETE: u8 = 30;
    pub const METRIC: u8 = 31;
    pub const THREAD_CREATE: u8 = 62;
    pub const THREAD_BEGIN: u8 = 63;
    pub const THREAD_END: u8 = 65;
    pub const PROGRAM_BEGIN: u8 = 83;
    pub const PROGRAM_END: u8 = 84;
}

/// Event types written without a record length: one compressed attribute and
/// nothing else. The list is closed: OTF2 adds no singletons after 1.1.
#[inline]
pub fn is_singleton(t: u8) -> bool {
    matches!(
        t,
        ev::ENTER
            | ev::LEAVE
            | ev::MPI_ISEND_COMPLETE
            | ev::MPI_IRECV_REQUEST
            | ev::MPI_REQUEST_TEST
            | ev::MPI_REQUEST_CANCELLED
            | ev::OMP_FORK
            | ev::OMP_TASK_CREATE
            | ev::OMP_TASK_SWITCH
            | ev::OMP_TASK_COMPLETE
    )
}

/// The `otf2-print` name of an event record type, `None` for types this
/// version of OTF2 (3.0) does not define.
pub fn event_name(t: u8) -> Option<&'static str> {
    const NAMES: [&str; 79] = [
        "BUFFER_FLUSH",
        "MEASUREMENT_ON_OFF",
        "ENTER",
        "LEAVE",
        "MPI_SEND",
        "MPI_ISEND",
        "MPI_ISEND_COMPLETE",
        "MPI_IRECV_REQUEST",
        "MPI_RECV",
        "MPI_IRECV",
        "MPI_REQUEST_TEST",
        "MPI_REQUEST_CANCELLED",
        "MPI_COLLECTIVE_BEGIN",
        "MPI_COLLECTIVE_END",
        "OMP_FORK",
        "OMP_JOIN",
        "OMP_ACQUIRE_LOCK",
        "OMP_RELEASE_LOCK",
        "OMP_TASK_CREATE",
        "OMP_TASK_SWITCH",
        "OMP_TASK_COMPLETE",
        "METRIC",
        "PARAMETER_STRING",
        "PARAMETER_INT",
        "PARAMETER_UNSIGNED_INT",
        "RMA_WIN_CREATE",
        "RMA_WIN_DESTROY",
        "RMA_COLLECTIVE_BEGIN",
        "RMA_COLLECTIVE_END",
        "RMA_GROUP_SYNC",
        "RMA_REQUEST_LOCK",
        "RMA_ACQUIRE_LOCK",
        "RMA_TRY_LOCK",
        "RMA_RELEASE_LOCK",
        "RMA_SYNC",
        "RMA_WAIT_CHANGE",
        "RMA_PUT",
        "RMA_GET",
        "RMA_ATOMIC",
        "RMA_OP_COMPLETE_BLOCKING",
        "RMA_OP_COMPLETE_NON_BLOCKING",
        "RMA_OP_TEST",
        "RMA_OP_COMPLETE_REMOTE",
        "THREAD_FORK",
        "THREAD_JOIN",
        "THREAD_TEAM_BEGIN",
        "THREAD_TEAM_END",
        "THREAD_ACQUIRE_LOCK",
        "THREAD_RELEASE_LOCK",
        "THREAD_TASK_CREATE",
        "THREAD_TASK_SWITCH",
        "THREAD_TASK_COMPLETE",
        "THREAD_CREATE",
        "THREAD_BEGIN",
        "THREAD_WAIT",
        "THREAD_END",
        "CALLING_CONTEXT_ENTER",
        "CALLING_CONTEXT_LEAVE",
        "CALLING_CONTEXT_SAMPLE",
        "IO_CREATE_HANDLE",
        "IO_DESTROY_HANDLE",
        "IO_DUPLICATE_HANDLE",
        "IO_SEEK",
        "IO_CHANGE_STATUS_FLAGS",
        "IO_DELETE_FILE",
        "IO_OPERATION_BEGIN",
        "IO_OPERATION_TEST",
        "IO_OPERATION_ISSUED",
        "IO_OPERATION_COMPLETE",
        "IO_OPERATION_CANCELLED",
        "IO_ACQUIRE_LOCK",
        "IO_RELEASE_LOCK",
        "IO_TRY_LOCK",
        "PROGRAM_BEGIN",
        "PROGRAM_END",
        "NON_BLOCKING_COLLECTIVE_REQUEST",
        "NON_BLOCKING_COLLECTIVE_COMPLETE",
        "COMM_CREATE",
        "COMM_DESTROY",
    ];
    (t as usize).checked_sub(10).and_then(|i| NAMES.get(i)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_line_up_with_ids() {
        assert_eq!(event_name(ev::ENTER), Some("ENTER"));
        assert_eq!(event_name(ev::METRIC), Some("METRIC"));
        assert_eq!(event_name(ev::THREAD_BEGIN), Some("THREAD_BEGIN"));
        assert_eq!(event_name(ev::PROGRAM_END), Some("PROGRAM_END"));
        assert_eq!(event_name(88), Some("COMM_DESTROY"));
        assert_eq!(event_name(89), None);
        assert_eq!(event_name(9), None);
    }
}
