import os

from cdk_ts_runtime import DeviceLogRepository

logs = DeviceLogRepository.from_env(os.environ)
logs.create_log_entry_for_specific_device("d#12345", "WARNING1", "2020-04-24T14:40:00", operator="Liz")  # 1
logs.get_logs_for_specific_device("d#12345", "WARNING1")                       # 2 one state, newest first
logs.get_warning_logs_for_specific_device("d#12345")                           # 3 WARNING, WARNING1, ... newest first
logs.get_logs_for_operator_between_two_dates("Liz", "2020-04-11", "2020-04-24")  # 4 GSI1, inclusive, whole days
logs.get_escalated_logs_for_supervisor("Sara")                                 # 5 GSI2
logs.get_escalated_logs_with_specific_status_for_supervisor("Sara", "WARNING4")  # 6 GSI2, begins_with "WARNING4#"
logs.get_escalated_logs_with_specific_status_for_supervisor_for_date("Sara", "WARNING4", "2020-04-27")  # 7
logs.escalate("d#12345", "WARNING1", "2020-04-24T14:40:00", "Sara")             # then visible through GSI2
assert [entry["DeviceID"] for entry in logs.get_escalated_logs_for_supervisor("Sara")] == ["d#12345"]
