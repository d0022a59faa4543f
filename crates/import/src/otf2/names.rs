//! Event record types and their names as `otf2-print` prints them.

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

/// The records whose single attribute is a compressed integer written
/// without a record length (OTF2's "singleton" events of version 1.x).
pub const fn is_singleton(t: u8) -> bool {
    matches!(
        t,
        ENTER
            | LEAVE
            | MPI_ISEND_COMPLETE
            | MPI_IRECV_REQUEST
            | MPI_REQUEST_TEST
            | MPI_REQUEST_CANCELLED
            | OMP_FORK
            | OMP_TASK_CREATE
            | OMP_TASK_SWITCH
            | OMP_TASK_COMPLETE
    )
}

/// Names of event record types 10..=88, as otf2-print prints them.
const EVENT_NAMES: [&str; 79] = [
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
    "PARAMETER_INT64",
    "PARAMETER_UINT64",
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

/// The name of record type `t` in an events file (as otf2-print prints it),
/// `ATTRIBUTE_LIST` for attribute lists, `UNKNOWN_<t>` for types this reader
/// does not know (records of newer OTF2 versions, skipped by their length).
pub fn event_name(t: u8) -> String {
    match t {
        super::buf::ATTRIBUTE_LIST => "ATTRIBUTE_LIST".into(),
        10..=88 => EVENT_NAMES[(t - 10) as usize].into(),
        _ => format!("UNKNOWN_{t}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_type_codes() {
        assert_eq!(event_name(ENTER), "ENTER");
        assert_eq!(event_name(MPI_COLLECTIVE_END), "MPI_COLLECTIVE_END");
        assert_eq!(event_name(METRIC), "METRIC");
        assert_eq!(event_name(THREAD_CREATE), "THREAD_CREATE");
        assert_eq!(event_name(THREAD_END), "THREAD_END");
        assert_eq!(event_name(82), "IO_TRY_LOCK");
        assert_eq!(event_name(PROGRAM_BEGIN), "PROGRAM_BEGIN");
        assert_eq!(event_name(88), "COMM_DESTROY");
        assert_eq!(event_name(200), "UNKNOWN_200");
    }
}
